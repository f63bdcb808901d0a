// bench:proxy's choice of the fixed rate. "Half the proxy's maximum": the closed-loop maximum is the proxy's under
// autocannon, whose 50 clients each wait for their answer, so every process reads many requests per event-loop turn.
// Open-loop requests arrive one by one and each process spends more CPU per request (measured on this machine at half
// that maximum: proxy 86 → 111-152 µs, sample app 34 → 43-50 µs, and the generator 31 µs for autocannon against
// 43 µs for the open-loop generator or 79 µs for the undici generator before it), so on 2 CPUs shared by generator,
// proxy, application and other tenants, half the closed-loop maximum can be more than the machine has left: that is
// how a run at load 2.9 saw the proxy's p50 at 306 ms. So a short open-loop ramp through the proxy finds the highest
// rate it sustains with this generator, and the fixed rate is half the lower of the two maxima (both reported).
import { progress } from '../shared/reports.ts';
import { openLoopRun } from './open-loop-run.ts';
import type { Servers } from './servers.ts';
import { PROBE_MAX_P50_MS, PROBE_STEPS, PROBE_STEPS_DOWN, PROXY_PATH } from './settings.ts';

const step = progress('proxy');

export interface ProbeStep {
  rate: number;
  achievedRate: number;
  p50: number;
  p99: number;
  sustained: boolean;
  cpuPressurePct: number | null;
}

export interface FixedRateChoice {
  rate: number;
  why: string;
  closedLoopMax: number;
  openLoopMax: number | undefined;
  probe: ProbeStep[];
}

/** Probes the proxy open-loop (1 s warm-up + 2 s per rate) and picks the fixed rate from `closedLoopMax`. */
export async function chooseFixedRate(servers: Servers, closedLoopMax: number): Promise<FixedRateChoice> {
  const proxyPort = servers.paths.find((p) => p.name === 'proxy')!.port;
  step(
    `open-loop probe through the proxy: ${PROBE_STEPS.map((f) => `${Math.round(f * 100)}%`).join(', ')} of ${closedLoopMax} req/s (lower if 50% is not sustained), 1 s warm-up + 2 s each, up to the first rate it does not sustain`,
  );
  const probe: ProbeStep[] = [];
  const probeAt = async (f: number): Promise<boolean> => {
    const r = Math.floor(closedLoopMax * f);
    const o = await openLoopRun(proxyPort, PROXY_PATH, r, 1, 2, servers.serversOf.proxy!);
    // Sustained: it kept up (no backlog building: the median waits no more than a few ms) without errors.
    const sustained = o.errors === 0 && o.achievedRate >= 0.97 * r && o.latency.p50 < PROBE_MAX_P50_MS;
    probe.push({
      rate: r,
      achievedRate: o.achievedRate,
      p50: o.latency.p50,
      p99: o.latency.p99,
      sustained,
      cpuPressurePct: o.window.cpuPressurePct,
    });
    step(
      `  ${r} req/s: achieved ${o.achievedRate}, p50 ${o.latency.p50} ms p99 ${o.latency.p99} ms, CPU pressure ${o.window.cpuPressurePct}% → ${sustained ? 'sustained' : 'NOT sustained'}`,
    );
    return sustained;
  };
  for (const f of PROBE_STEPS) if (!(await probeAt(f))) break;
  // Not even half: down until a rate is sustained (a busy machine), so the fixed rate is not one already seen
  // to saturate.
  if (!probe.some((x) => x.sustained)) for (const f of PROBE_STEPS_DOWN) if (await probeAt(f)) break;
  const sustainedRates = probe.filter((x) => x.sustained).map((x) => x.rate);
  const openLoopMax = sustainedRates.length > 0 ? Math.max(...sustainedRates) : undefined;
  const rateBasis = openLoopMax !== undefined && openLoopMax < closedLoopMax ? openLoopMax : closedLoopMax;
  const why =
    openLoopMax === undefined
      ? `half the closed-loop maximum (${closedLoopMax} req/s); the open-loop probe sustained none of its rates (down to 20%), so the machine is too busy for this measurement to mean much`
      : openLoopMax < closedLoopMax
        ? `half the open-loop maximum (${openLoopMax} req/s sustained; the closed-loop maximum was ${closedLoopMax} req/s)`
        : `half the closed-loop maximum (${closedLoopMax} req/s; the open-loop probe sustained it)`;
  return { rate: Math.max(50, Math.floor(rateBasis / 2)), why, closedLoopMax, openLoopMax, probe };
}
