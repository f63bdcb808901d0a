// Plain-text tables in kubectl's style (upper-case headers, columns padded to their widest cell, three spaces apart),
// so the debug tools' output lines up with what a user already reads from `kubectl get`.

export interface Column {
  header: string;
  /** Cells longer than this are cut with an ellipsis (the JSON output keeps them whole). */
  max?: number;
  /** What an empty cell prints (default `-`); a marker column prints nothing. */
  emptyAs?: string;
}

const GAP = '   ';

function cut(s: string, max: number | undefined): string {
  if (max === undefined || s.length <= max) return s;
  return `${s.slice(0, Math.max(0, max - 1))}…`;
}

/** One line per row, headers first; empty cells print as `-` (unless the column says otherwise) so every column stays readable by eye and by awk. */
export function renderTable(columns: (string | Column)[], rows: string[][]): string {
  const cols = columns.map((c) => (typeof c === 'string' ? { header: c } : c));
  const cells = rows.map((r) =>
    cols.map((c, i) => {
      const v = (r[i] ?? '').replace(/\s*\n\s*/g, ' ');
      return cut(v === '' ? (c.emptyAs ?? '-') : v, c.max);
    }),
  );
  const widths = cols.map((c, i) => Math.max(c.header.length, ...cells.map((r) => r[i].length)));
  const line = (r: string[]) =>
    r
      .map((v, i) => (i === r.length - 1 ? v : v.padEnd(widths[i])))
      .join(GAP)
      .trimEnd();
  return [line(cols.map((c) => c.header)), ...cells.map(line)].join('\n');
}
