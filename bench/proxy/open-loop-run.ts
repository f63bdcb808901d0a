// Runs bench:proxy's open-loop generator (generator.ts) in a fresh process — in the bench process it would carry
// autocannon's 200 MB heap and its scavenges into every p99 — and samples the given server processes over exactly its
// measured window (window.ts), between the generator's `load-window-start` and `load-window-end` lines.
import { spawn } from 'node:child_process';
import { repoRoot } from '../shared/paths.ts';
import { track } from '../shared/processes.ts';
import type { OpenLoop } from './generator.ts';
import { BENCH_ENTRY } from './settings.ts';
import { type WindowSample, windowSampler } from './window.ts';

export type SampledOpenLoop = OpenLoop & { window: WindowSample };

/**
 * One open-loop run of `rate` req/s at port/path: `warmupS` unmeasured, `seconds` measured; `pids` are the server
 * processes to sample. `onTick` runs every second of the window (the soak's RSS samples), `onWindowStart` once at
 * its start (the soak's baseline); with `rawPath` the generator writes each request's due time and latency there.
 */
export async function openLoopRun(
  port: number,
  path: string,
  rate: number,
  warmupS: number,
  seconds: number,
  pids: Record<string, number>,
  hooks: { onWindowStart?: () => void; onTick?: () => void } = {},
  rawPath?: string,
): Promise<SampledOpenLoop> {
  const args = [BENCH_ENTRY, '--load', String(port), path, String(rate), String(warmupS), String(seconds)];
  const child = track(
    spawn(process.execPath, [...args, ...(rawPath ? [rawPath] : [])], {
      stdio: ['ignore', 'pipe', 'pipe'],
      cwd: repoRoot,
    }),
  );
  const sampler = windowSampler(pids);
  let timer: NodeJS.Timeout | undefined;
  let windowEnd: WindowSample | undefined;
  try {
    const result = await new Promise<OpenLoop>((resolve, reject) => {
      let out = '';
      let err = '';
      const t = setTimeout(
        () => reject(new Error(`load generator did not finish: ${err.slice(-2000)}`)),
        (warmupS + seconds + 90) * 1000,
      );
      child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
      child.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        let nl = out.indexOf('\n');
        while (nl >= 0) {
          const line = out.slice(0, nl);
          out = out.slice(nl + 1);
          if (line === 'load-window-start') {
            sampler.start();
            hooks.onWindowStart?.();
            if (hooks.onTick) timer = setInterval(hooks.onTick, 1000);
          } else if (line === 'load-window-end') {
            if (timer) clearInterval(timer);
            windowEnd = sampler.end(Math.round(rate * seconds));
          } else if (line.startsWith('load-result ')) {
            clearTimeout(t);
            resolve(JSON.parse(line.slice('load-result '.length)) as OpenLoop);
          }
          nl = out.indexOf('\n');
        }
      });
      child.once('exit', (code) => {
        clearTimeout(t);
        reject(new Error(`load generator exited with ${code}: ${err.slice(-2000)}`));
      });
    });
    const window = windowEnd ?? sampler.end(result.requests);
    window.cpuUsPerRequest.generator = result.generator.cpuUsPerRequest;
    return { ...result, window };
  } finally {
    if (timer) clearInterval(timer);
    child.kill('SIGKILL');
  }
}
