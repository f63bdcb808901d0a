// Starting and stopping the lab process in the background (the embedded backend of lab:up / lab:down), and the
// lab-process flag that lab:up checks itself before starting it (--sa-token-max-expiration).
import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync, writeSync } from 'node:fs';
import https from 'node:https';
import { dirname, join } from 'node:path';
import type { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { compileCacheDir } from '../compile-cache.ts';
import { type LabRecord, labPaths, readLabRecord } from '../state.ts';
import { killTaggedProcesses } from './node/runtime/orphans.ts';

const MAIN = join(dirname(fileURLToPath(import.meta.url)), 'main.ts');
/** Turns the dependency bundles on before main.ts's imports load (system/shared/dep-bundles.ts). */
const BUNDLES = fileURLToPath(new URL('../../system/shared/dep-bundles-register.ts', import.meta.url));

export const SA_TOKEN_MAX_EXPIRATION_ENV = 'GWLAB_SA_TOKEN_MAX_EXPIRATION';

/** Bounds of --sa-token-max-expiration. kube-apiserver wants 1 h to 2^32 s; the lab goes down to 5 s for tests. */
export const SA_TOKEN_MAX_EXPIRATION_BOUNDS = { min: 5, max: 2 ** 32 };

/**
 * `--sa-token-max-expiration` / GWLAB_SA_TOKEN_MAX_EXPIRATION: a whole number of seconds within
 * SA_TOKEN_MAX_EXPIRATION_BOUNDS. Throws with the reason.
 */
export function parseTokenExpiration(text: string): number {
  if (!/^\s*\d+\s*$/.test(text)) throw new Error(`${JSON.stringify(text)} is not a whole number of seconds`);
  const n = Number(text);
  const { min, max } = SA_TOKEN_MAX_EXPIRATION_BOUNDS;
  if (n < min || n > max) throw new Error(`${n} s is outside ${min} s to ${max} s`);
  return n;
}

export function pidAlive(pid: number | undefined): boolean {
  if (!pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Whether the lab's API server answers /readyz (TLS verified against the lab's own CA). With node:https, one request
 * on a connection of its own: lab:up asks this before anything else is loaded.
 */
export async function apiServerReady(rec: LabRecord, home: string): Promise<boolean> {
  if (!rec.apiServerUrl) return false;
  let ca: string;
  try {
    ca = readFileSync(join(labPaths(rec.name, home).pki, 'ca.crt'), 'utf8');
  } catch {
    return false;
  }
  return new Promise((resolve) => {
    const req = https.get(`${rec.apiServerUrl}/readyz`, { ca, agent: false, timeout: 2000 }, (res) => {
      res.resume();
      resolve((res.statusCode ?? 500) < 500);
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => resolve(false));
  });
}

export function processLogPath(name: string, home: string): string {
  return join(labPaths(name, home).root, 'lab-process.log');
}

/** The running lab process's record, or undefined when none runs. */
export async function runningLab(name: string, home: string): Promise<LabRecord | undefined> {
  const rec = readLabRecord(name, home);
  if (rec?.backend !== 'embedded' || !pidAlive(rec.pid)) return undefined;
  return (await apiServerReady(rec, home)) ? rec : undefined;
}

export interface SpawnOptions {
  name: string;
  home: string;
  forceLbPortFallback?: boolean;
  logLevel?: string;
  /** --sa-token-max-expiration of the lab process (seconds). */
  saTokenMaxExpirationSeconds?: number;
  timeoutMs?: number;
}

export interface SpawnedLab {
  /** The record once the API server serves (lab:up's install can start). */
  record: LabRecord;
  /** Resolves with the record once the controllers and the node agent have started too; rejects if the process exits. */
  started: Promise<LabRecord>;
}

/** The fd on which a lab process spawned by spawnLabProcess tells it the milestones of its start (a pipe). */
export const LAB_EVENTS_FD_ENV = 'GWLAB_LAB_EVENTS_FD';
type Milestone = 'serving' | 'started';

/**
 * In the lab process: tells the spawnLabProcess that started it a milestone of its start (`serving`: the API server
 * serves and the record says `starting`; `started`: the controllers and the node agent run), then, after `started`,
 * lets go of the pipe. Does nothing in a lab process started otherwise, or once the parent has gone.
 */
export function tellStarter(m: Milestone): void {
  const fd = Number(process.env[LAB_EVENTS_FD_ENV]);
  if (!fd) return;
  try {
    writeSync(fd, `${m}\n`);
  } catch {} // the parent exited or stopped listening: nobody to tell
  if (m !== 'started') return;
  delete process.env[LAB_EVENTS_FD_ENV];
  try {
    closeSync(fd);
  } catch {}
}

/**
 * Starts the lab process detached (it outlives the command) and waits until its API server is ready; the controllers
 * and the node agent may still be starting then (`started`). The process says when over a pipe (tellStarter): lab:up
 * learns it at once, where polling the record and asking /readyz took ~50 ms more on a process busy starting.
 */
export async function spawnLabProcess(o: SpawnOptions): Promise<SpawnedLab> {
  const paths = labPaths(o.name, o.home);
  mkdirSync(paths.root, { recursive: true });
  const logPath = processLogPath(o.name, o.home);
  const out = openSync(logPath, 'a');
  const args = ['--import', BUNDLES, MAIN, '--name', o.name, '--home', o.home];
  if (o.forceLbPortFallback) args.push('--force-lb-fallback');
  if (o.logLevel) args.push('--log-level', o.logLevel);
  if (o.saTokenMaxExpirationSeconds) args.push('--sa-token-max-expiration', String(o.saTokenMaxExpirationSeconds));
  const child = spawn(process.execPath, args, {
    detached: true,
    stdio: ['ignore', out, out, 'pipe'],
    // The compile cache on from its first module (lab/compile-cache.ts).
    env: { ...process.env, GWLAB_HOME: o.home, NODE_COMPILE_CACHE: compileCacheDir(), [LAB_EVENTS_FD_ENV]: '3' },
  });
  closeSync(out);
  const events = child.stdio[3] as Readable;
  const seen = new Set<string>();
  const waiters = new Set<() => void>();
  const wakeAll = () => {
    for (const w of waiters) w();
  };
  let exited: number | null | undefined;
  child.on('exit', (code) => {
    exited = code;
    wakeAll();
  });
  events.setEncoding('utf8');
  let buffered = '';
  events.on('data', (d: string) => {
    buffered += d;
    const lines = buffered.split('\n');
    buffered = lines.pop()!;
    for (const l of lines) seen.add(l.trim());
    wakeAll();
  });
  events.on('error', () => {});
  child.unref();
  const deadline = performance.now() + (o.timeoutMs ?? 30_000);
  /** Resolves with the record once the process said `m`; throws with the log's tail if it exits or time is up. */
  const milestone = (m: Milestone, what: string) =>
    new Promise<LabRecord>((resolve, reject) => {
      const done = () => {
        waiters.delete(check);
        clearTimeout(timer);
      };
      const fail = () => {
        done();
        if (exited === undefined) child.kill('SIGKILL');
        const tail = readTail(logPath, 20);
        const why = exited !== undefined ? `exited (code ${exited})` : `did not ${what} in time`;
        reject(new Error(`the lab process ${why}; last lines of ${logPath}:\n${tail}`));
      };
      const check = () => {
        const rec = seen.has(m) ? readLabRecord(o.name, o.home) : undefined;
        if (rec && rec.pid === child.pid) {
          done();
          resolve(rec);
        } else if (exited !== undefined) fail();
      };
      const timer = setTimeout(fail, Math.max(0, deadline - performance.now()));
      waiters.add(check);
      check();
    });
  // Whatever happens, the pipe goes once there is nothing left to hear: lab:up must be free to exit.
  const hangUp = () => {
    events.destroy();
    (events as Readable & { unref?: () => void }).unref?.();
  };
  let record: LabRecord;
  try {
    record = await milestone('serving', 'become ready');
  } catch (err) {
    hangUp();
    throw err;
  }
  const started = milestone('started', 'start its controllers and node agent').finally(hangUp);
  started.catch(() => {}); // the caller's to await; not unhandled if it stopped waiting first
  return { record, started };
}

export function readTail(path: string, lines: number): string {
  try {
    return readFileSync(path, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

/** SIGTERM, wait for a graceful stop, then SIGKILL; finally kill any process still tagged with this lab. */
export async function stopLabProcess(name: string, home: string, timeoutMs = 30_000): Promise<{ leftovers: number }> {
  const rec = readLabRecord(name, home);
  if (rec?.pid && pidAlive(rec.pid)) {
    try {
      process.kill(rec.pid, 'SIGTERM');
    } catch {}
    const deadline = performance.now() + timeoutMs;
    while (pidAlive(rec.pid) && performance.now() < deadline) await sleep(50);
    if (pidAlive(rec.pid)) {
      try {
        process.kill(rec.pid, 'SIGKILL');
      } catch {}
    }
  }
  // This lab's pods only: another lab of the same name under another GWLAB_HOME has the same lab tag.
  const killed = await killTaggedProcesses(rec?.pid ? { lab: name, labPid: rec.pid } : { lab: name });
  return { leftovers: killed.length };
}
