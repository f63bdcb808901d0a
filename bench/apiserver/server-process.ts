// bench:apiserver's server: the embedded API server (lab/embedded/apiserver/main.ts) in its own process, as in a lab,
// with durability on, and a diagnostics preload (SERVER_DIAG) that reports its GC pauses, event-loop delay and memory
// over the IPC channel when asked. Also the bench's HTTPS client of it (undici request(), the lab's admin token).
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Agent, request } from 'undici';
import { labPaths } from '../../lab/state.ts';
import { repoRoot } from '../shared/paths.ts';
import { GC_KINDS } from './fanout-tail.ts';

/**
 * Loaded into the server process with --import: reports its GC pauses (PerformanceObserver 'gc'), event-loop delay
 * (monitorEventLoopDelay at its default 10-ms sampling, so it adds ~100 cheap timer wake-ups a second; reported as
 * the lateness beyond those 10 ms) and process.memoryUsage() over the IPC channel, only between 'start' and 'stop',
 * so the figures outside those windows run without it. Nothing of the server is changed.
 */
const SERVER_DIAG = `
import { PerformanceObserver, monitorEventLoopDelay, performance } from 'node:perf_hooks';
const toMono = Number(process.hrtime.bigint()) / 1e6 - performance.now();
const KINDS = ${JSON.stringify(GC_KINDS)};
let gc = [];
const take = (list) => { for (const e of list) gc.push({ at: e.startTime + toMono, ms: e.duration, kind: KINDS[e.detail?.kind] ?? String(e.detail?.kind) }); };
const obs = new PerformanceObserver((l) => take(l.getEntries()));
const eld = monitorEventLoopDelay();
process.on('message', (m) => {
  if (m?.diag === 'start') {
    gc = [];
    obs.observe({ entryTypes: ['gc'] });
    eld.reset();
    eld.enable();
    process.send({ diag: 'start' });
  } else if (m?.diag === 'stop') {
    take(obs.takeRecords());
    obs.disconnect();
    eld.disable();
    // Each value is the time between two of the histogram's 10-ms timer wake-ups: the delay is what exceeds 10 ms.
    const ms = (ns) => Math.max(0, Math.round((ns - 10e6) / 1e4) / 100);
    process.send({ diag: 'stop', gc, eventLoopDelay: { p50Ms: ms(eld.percentile(50)), p99Ms: ms(eld.percentile(99)), maxMs: ms(eld.max) } });
  } else if (m?.diag === 'memory') process.send({ diag: 'memory', memory: process.memoryUsage() });
});
process.channel?.unref();
`;

export type Request = (method: 'GET' | 'POST', path: string, body?: unknown, accept?: string) => Promise<string>;

export interface ApiServer {
  child: ChildProcess;
  /** One request to the server's diagnostics preload and its answer. */
  diag<T>(what: 'start' | 'stop' | 'memory'): Promise<T>;
  /** The server's URL, the admin token, the CA (PEM) and the kubeconfig file. */
  server: string;
  token: string;
  ca: string;
  kubeconfig: string;
  /** A request with the admin token; rejects on a status of 300 or more. */
  req: Request;
  agent: Agent;
  /** SIGTERMs the server (also done when this process exits) and waits for its exit. */
  stop(): Promise<void>;
}

/** Spawns the server with GWLAB_HOME=`home` (BENCH_CPU_PROF=<dir>: a CPU profile of it there) and waits until it serves. */
export async function startApiServer(home: string): Promise<ApiServer> {
  // BENCH_CPU_PROF=<dir> writes a CPU profile of the server process there.
  const prof = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];
  const diagFile = join(home, 'server-diag.mjs');
  writeFileSync(diagFile, SERVER_DIAG);
  const args = ['--name', 'bench', '--no-controllers', '--log-level', 'warn'];
  const child = spawn(
    process.execPath,
    [...prof, '--import', pathToFileURL(diagFile).href, join(repoRoot, 'lab/embedded/apiserver/main.ts'), ...args],
    { env: { ...process.env, GWLAB_HOME: home }, stdio: ['ignore', 'pipe', 'inherit', 'ipc'] },
  );
  const stopChild = () => {
    if (child.exitCode === null) child.kill('SIGTERM');
  };
  process.on('exit', stopChild);
  const stop = async () => {
    stopChild();
    await new Promise((r) => (child.exitCode !== null ? r(null) : child.once('exit', r)));
  };
  try {
    await new Promise<void>((resolve, reject) => {
      child.stdout!.on('data', (d: Buffer) => d.toString().includes('KUBECONFIG=') && resolve());
      child.once('exit', (c) => reject(new Error(`server exited with ${c}`)));
    });
  } catch (err) {
    await stop();
    throw err;
  }
  const kubeconfig = labPaths('bench', home).kubeconfig;
  const kcText = readFileSync(kubeconfig, 'utf8');
  const server = /server: (\S+)/.exec(kcText)![1]!;
  const token = /token: (\S+)/.exec(kcText)![1]!;
  const ca = Buffer.from(/certificate-authority-data: (\S+)/.exec(kcText)![1]!, 'base64').toString();
  const agent = new Agent({ connect: { ca }, connections: 64, pipelining: 1 });
  // undici's request() (not fetch(), whose WHATWG layer costs more than the server's work per create).
  const req: Request = async (method, path, body, accept) => {
    const r = await request(server + path, {
      method,
      dispatcher: agent,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body ? { 'content-type': 'application/json' } : {}),
        ...(accept ? { accept } : {}),
      },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await r.body.text();
    if (r.statusCode >= 300) throw new Error(`${method} ${path}: ${r.statusCode} ${text.slice(0, 200)}`);
    return text;
  };
  const diag = <T>(what: 'start' | 'stop' | 'memory') =>
    new Promise<T>((resolve, reject) => {
      const onMessage = (m: any) => {
        if (m?.diag !== what) return;
        child.off('message', onMessage);
        resolve(m as T);
      };
      child.on('message', onMessage);
      child.send({ diag: what }, (e) => e && reject(e));
    });
  return { child, diag, server, token, ca, kubeconfig, req, agent, stop };
}
