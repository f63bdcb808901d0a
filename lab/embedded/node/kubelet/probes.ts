// Container probes (startup, liveness, readiness) with httpGet, tcpSocket and exec, on the kubelet's schedule:
// initialDelaySeconds, periodSeconds, timeoutSeconds, successThreshold, failureThreshold. The kubelet is told when
// the result flips (after the thresholds) and decides what follows (Ready condition, restart).
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';

export type ProbeKind = 'startup' | 'liveness' | 'readiness';

export interface ProbeTarget {
  podIP: string;
  /** Resolves a named port to a number (from the container's ports). */
  namedPort(name: string): number | undefined;
  /** Maps a port as written to the port really bound (low-port shift). */
  effectivePort(port: number): number;
  /** Runs `command` in the container's environment; resolves with its exit code and output. */
  exec(command: string[], timeoutMs: number): Promise<{ exitCode: number; output: string }>;
}

export interface ProbeResult {
  ok: boolean;
  message: string;
}

function resolvePort(port: unknown, t: ProbeTarget): number {
  if (typeof port === 'number') return t.effectivePort(port);
  if (typeof port === 'string' && /^\d+$/.test(port)) return t.effectivePort(Number(port));
  const n = t.namedPort(String(port));
  if (n === undefined) throw new Error(`port "${port}" not found in the container's ports`);
  return t.effectivePort(n);
}

export async function runProbe(probe: any, t: ProbeTarget): Promise<ProbeResult> {
  const timeoutMs = (probe.timeoutSeconds ?? 1) * 1000;
  try {
    if (probe.httpGet) {
      const g = probe.httpGet;
      const port = resolvePort(g.port, t);
      const scheme = String(g.scheme ?? 'HTTP').toUpperCase();
      const host = g.host || t.podIP;
      const path = g.path || '/';
      const headers: Record<string, string> = { 'User-Agent': 'kube-probe/1.32', Accept: '*/*' };
      for (const h of g.httpHeaders ?? []) headers[h.name] = h.value;
      const status = await new Promise<number>((resolve, reject) => {
        const mod = scheme === 'HTTPS' ? https : http;
        const req = mod.request(
          { host, port, path, method: 'GET', headers, timeout: timeoutMs, rejectUnauthorized: false, agent: false },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        );
        req.on('timeout', () =>
          req.destroy(new Error(`context deadline exceeded (Client.Timeout exceeded while awaiting headers)`)),
        );
        req.on('error', reject);
        req.end();
      });
      const url = `${scheme.toLowerCase()}://${host}:${port}${path}`;
      return status >= 200 && status < 400
        ? { ok: true, message: '' }
        : { ok: false, message: `HTTP probe failed with statuscode: ${status}` + (url ? '' : '') };
    }
    if (probe.tcpSocket) {
      const port = resolvePort(probe.tcpSocket.port, t);
      const host = probe.tcpSocket.host || t.podIP;
      await new Promise<void>((resolve, reject) => {
        const s = net.connect({ host, port });
        const timer = setTimeout(() => {
          s.destroy();
          reject(new Error(`dial tcp ${host}:${port}: i/o timeout`));
        }, timeoutMs);
        s.once('connect', () => {
          clearTimeout(timer);
          s.destroy();
          resolve();
        });
        s.once('error', (e) => {
          clearTimeout(timer);
          reject(
            new Error(
              `dial tcp ${host}:${port}: connect: ${(e as NodeJS.ErrnoException).code === 'ECONNREFUSED' ? 'connection refused' : e.message}`,
            ),
          );
        });
      });
      return { ok: true, message: '' };
    }
    if (probe.exec) {
      const r = await t.exec(probe.exec.command ?? [], timeoutMs);
      return r.exitCode === 0
        ? { ok: true, message: '' }
        : {
            ok: false,
            message: `command ${JSON.stringify((probe.exec.command ?? []).join(' '))} exited with ${r.exitCode}: ${r.output.trim()}`,
          };
    }
    if (probe.grpc) {
      // grpc health probes: a TCP connect is the closest the node can check without the health proto.
      return runProbe({ tcpSocket: { port: probe.grpc.port }, timeoutSeconds: probe.timeoutSeconds }, t);
    }
    return { ok: true, message: '' };
  } catch (err) {
    const e = err as Error;
    return { ok: false, message: probe.httpGet ? `Get "${probeUrl(probe, t)}": ${e.message}` : e.message };
  }
}

function probeUrl(probe: any, t: ProbeTarget): string {
  const g = probe.httpGet;
  let port: number | string = g.port;
  try {
    port = resolvePort(g.port, t);
  } catch {
    // keep as written
  }
  return `${String(g.scheme ?? 'HTTP').toLowerCase()}://${g.host || t.podIP}:${port}${g.path || '/'}`;
}

/** How often a readiness probe is retried until it first succeeds (the fast start in ProbeWorker.tick). */
export const FAST_START_MS = 50;

/** Runs one probe periodically; calls onChange when the thresholded result flips (and on the first result). */
export class ProbeWorker {
  readonly kind: ProbeKind;
  result: boolean | undefined;
  private readonly probe: any;
  private readonly target: ProbeTarget;
  private readonly onChange: (ok: boolean, message: string) => void;
  private readonly onFailure: (message: string) => void;
  private timer?: NodeJS.Timeout;
  private stopped = false;
  private successes = 0;
  private failures = 0;

  constructor(
    kind: ProbeKind,
    probe: any,
    target: ProbeTarget,
    onChange: (ok: boolean, message: string) => void,
    onFailure: (message: string) => void,
  ) {
    this.kind = kind;
    this.probe = probe;
    this.target = target;
    this.onChange = onChange;
    this.onFailure = onFailure;
  }

  start(): void {
    this.schedule((this.probe.initialDelaySeconds ?? 0) * 1000);
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.tick(), ms);
    this.timer.unref();
  }

  /** When the first probe ran (the fast start's window is measured from it). */
  private firstProbeAt?: number;

  private async tick(): Promise<void> {
    if (this.stopped) return;
    this.firstProbeAt ??= performance.now();
    const r = await runProbe(this.probe, this.target);
    if (this.stopped) return;
    const period = (this.probe.periodSeconds ?? 10) * 1000;
    const failureThreshold = this.probe.failureThreshold ?? 3;
    // Fast start: until a readiness probe first succeeds, it is retried every FAST_START_MS instead of every
    // periodSeconds, for at most failureThreshold periods: the time in which the kubelet could not have marked the
    // container unready (its readiness starts as failed, prober/worker.go's initialValue). The container is not ready
    // either way, so these early failures change nothing and are not reported; this only makes a new pod Ready as
    // soon as it answers instead of up to a period later (the kubelet too probes a started, unready container
    // between ticks: prober_manager.go UpdatePodStatus triggers an immediate readiness run).
    if (
      this.kind === 'readiness' &&
      this.result === undefined &&
      !r.ok &&
      performance.now() - this.firstProbeAt < failureThreshold * period
    ) {
      this.schedule(Math.min(FAST_START_MS, period));
      return;
    }
    const successThreshold = this.kind === 'readiness' ? (this.probe.successThreshold ?? 1) : 1;
    if (r.ok) {
      this.successes++;
      this.failures = 0;
      if (this.result !== true && this.successes >= successThreshold) {
        this.result = true;
        this.onChange(true, '');
      }
    } else {
      this.failures++;
      this.successes = 0;
      this.onFailure(r.message);
      if (this.result !== false && this.failures >= failureThreshold) {
        this.result = false;
        this.onChange(false, r.message);
      }
    }
    // A startup probe stops once it succeeded; the others run for the container's life.
    if (this.kind === 'startup' && this.result === true) return;
    this.schedule(period);
  }
}
