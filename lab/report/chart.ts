// Inline SVG line charts for the self-contained HTML reports (no external assets, no script): one or more series of
// (x, y) points on shared axes with "nice" ticks, a legend, and a tooltip (<title>) per point. Used by bench:soak for
// RSS and open files over time and for reconcile latencies.
import { escapeHtml } from './html.ts';

export interface Series {
  name: string;
  points: [number, number][];
}

export interface ChartOptions {
  title: string;
  xLabel: string;
  yLabel: string;
  width?: number;
  height?: number;
  /** Draw markers only (no connecting line), e.g. for one value per change. */
  markersOnly?: boolean;
  /** Formats tick values on the x axis (default: the number). */
  xFormat?: (x: number) => string;
}

const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#17becf'];

/** Round tick values covering [lo, hi] (1, 2 or 5 times a power of ten apart), about `count` of them. */
export function niceTicks(lo: number, hi: number, count = 5): number[] {
  if (!Number.isFinite(lo) || !Number.isFinite(hi)) return [0];
  if (hi === lo) hi = lo + 1;
  const raw = (hi - lo) / count;
  const pow = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * pow).find((s) => s >= raw) ?? 10 * pow;
  const ticks: number[] = [];
  for (let t = Math.floor(lo / step) * step; t <= hi + step * 1e-9; t += step) ticks.push(Number(t.toPrecision(12)));
  if (ticks.at(-1)! < hi) ticks.push(Number((ticks.at(-1)! + step).toPrecision(12)));
  return ticks;
}

const fmt = (n: number) => (Math.abs(n) >= 1000 || Number.isInteger(n) ? String(Math.round(n)) : n.toPrecision(3));

export function lineChart(series: Series[], o: ChartOptions): string {
  const W = o.width ?? 720;
  const H = o.height ?? 280;
  const m = { left: 64, right: 16, top: 28, bottom: 44 + 18 * Math.ceil(series.length / 4) };
  const pts = series.flatMap((s) => s.points);
  if (!pts.length) {
    return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="60" role="img"><text x="8" y="20" font-weight="bold">${escapeHtml(o.title)}</text><text x="8" y="44">no data</text></svg>`;
  }
  const xs = niceTicks(Math.min(...pts.map((p) => p[0])), Math.max(...pts.map((p) => p[0])));
  const ys = niceTicks(Math.min(0, ...pts.map((p) => p[1])), Math.max(...pts.map((p) => p[1])));
  const [x0, x1, y0, y1] = [xs[0], xs.at(-1)!, ys[0], ys.at(-1)!];
  const px = (x: number) => m.left + ((x - x0) / (x1 - x0 || 1)) * (W - m.left - m.right);
  const py = (y: number) => H - m.bottom - ((y - y0) / (y1 - y0 || 1)) * (H - m.top - m.bottom);
  const xf = o.xFormat ?? fmt;
  const grid = [
    ...ys.map(
      (y) =>
        `<line x1="${m.left}" x2="${W - m.right}" y1="${py(y)}" y2="${py(y)}" stroke="#e5e5e5"/><text x="${m.left - 6}" y="${py(y) + 4}" text-anchor="end">${fmt(y)}</text>`,
    ),
    ...xs.map(
      (x) =>
        `<line x1="${px(x)}" x2="${px(x)}" y1="${m.top}" y2="${H - m.bottom}" stroke="#f0f0f0"/><text x="${px(x)}" y="${H - m.bottom + 16}" text-anchor="middle">${escapeHtml(xf(x))}</text>`,
    ),
  ].join('');
  const lines = series
    .map((s, i) => {
      const c = COLORS[i % COLORS.length];
      const path = s.points.map((p, j) => `${j ? 'L' : 'M'}${px(p[0]).toFixed(1)},${py(p[1]).toFixed(1)}`).join('');
      const marks = s.points
        .map(
          (p) =>
            `<circle cx="${px(p[0]).toFixed(1)}" cy="${py(p[1]).toFixed(1)}" r="${o.markersOnly ? 3.5 : 1.8}" fill="${c}"><title>${escapeHtml(`${s.name}: ${xf(p[0])}, ${fmt(p[1])}`)}</title></circle>`,
        )
        .join('');
      return `${o.markersOnly ? '' : `<path d="${path}" fill="none" stroke="${c}" stroke-width="1.5"/>`}${marks}`;
    })
    .join('');
  const legend = series
    .map((s, i) => {
      const lx = m.left + (i % 4) * 165;
      const ly = H - m.bottom + 48 + 18 * Math.floor(i / 4);
      return `<rect x="${lx}" y="${ly - 9}" width="10" height="10" fill="${COLORS[i % COLORS.length]}"/><text x="${lx + 14}" y="${ly}">${escapeHtml(s.name)}</text>`;
    })
    .join('');
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="system-ui,sans-serif" font-size="11" role="img" aria-label="${escapeHtml(o.title)}">
<text x="${m.left}" y="16" font-size="13" font-weight="bold">${escapeHtml(o.title)}</text>
<text x="12" y="${(m.top + H - m.bottom) / 2}" transform="rotate(-90 12 ${(m.top + H - m.bottom) / 2})" text-anchor="middle">${escapeHtml(o.yLabel)}</text>
<text x="${(m.left + W - m.right) / 2}" y="${H - m.bottom + 30}" text-anchor="middle">${escapeHtml(o.xLabel)}</text>
${grid}<rect x="${m.left}" y="${m.top}" width="${W - m.left - m.right}" height="${H - m.top - m.bottom}" fill="none" stroke="#999"/>
${lines}${legend}</svg>`;
}
