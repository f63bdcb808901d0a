// The processes and temporary folders a benchmark starts, and the guarantee that none outlives it (ARCHITECTURE.md:
// nothing started by a script may outlive it). startNode() starts a server and waits for its "ready" line;
// runNodeTimed() runs a command-line tool to its end and times it; cleanUpOnExit() kills what is left however the
// bench ends (an interrupt, a closed output pipe, an uncaught error).
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from './paths.ts';

const children = new Set<ChildProcess>();
const tempDirs = new Set<string>();

/** Remembers `child` until it exits, so that killChildren() reaches it. */
export function track<C extends ChildProcess>(child: C): C {
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

/** SIGKILLs every tracked child still running. */
export function killChildren(): void {
  for (const c of children) c.kill('SIGKILL');
}

/** A new temporary folder (`<tmp>/<prefix>XXXXXX`), removed at exit if the bench has not removed it. */
export function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  tempDirs.add(dir);
  return dir;
}

export function removeTempDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  tempDirs.delete(dir);
}

/**
 * Kills the tracked children and removes the temporary folders when this process exits, however it ends: SIGINT,
 * SIGTERM and SIGHUP exit with 130, and an error on stdout or stderr (EPIPE when the output goes to `| head`) with 1.
 * Without this the servers and generators outlived a bench whose output went to `| head`.
 */
export function cleanUpOnExit(): void {
  process.on('exit', () => {
    killChildren();
    for (const d of tempDirs) rmSync(d, { recursive: true, force: true });
  });
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.once(sig, () => process.exit(130));
  process.stderr.on('error', () => process.exit(1));
  process.stdout.on('error', () => process.exit(1));
}

/**
 * Starts `node <args>` (tracked, in the repository root) and resolves with the first match of `ready` in what it has
 * written to stdout, or to stderr; rejects if it exits first or has not matched within `timeoutMs`.
 */
export function startNode(
  args: string[],
  ready: RegExp,
  what: string,
  timeoutMs = 30_000,
): Promise<{ child: ChildProcess; match: RegExpExecArray }> {
  const child = track(spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], cwd: repoRoot }));
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    const t = setTimeout(
      () => reject(new Error(`${what} did not answer in ${timeoutMs / 1000} s: ${err.slice(-2000)}`)),
      timeoutMs,
    );
    const look = (text: string) => {
      const m = ready.exec(text);
      if (m) {
        clearTimeout(t);
        resolve({ child, match: m });
      }
    };
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      look(out);
    });
    child.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      look(err);
    });
    child.once('exit', (code) => {
      clearTimeout(t);
      reject(new Error(`${what} exited with ${code}: ${err.slice(-2000)}`));
    });
  });
}

/**
 * Runs `node <args>` to its end (`FORCE_COLOR=0` over this process's environment and `env`) and resolves with its
 * exit code, its stdout and stderr interleaved, and its wall time in ms from the spawn.
 */
export function runNodeTimed(
  args: string[],
  opts: { cwd: string; env?: NodeJS.ProcessEnv },
): Promise<{ code: number; out: string; ms: number }> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, {
      cwd: opts.cwd,
      env: { ...process.env, FORCE_COLOR: '0', ...opts.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('exit', (code) => resolve({ code: code ?? 1, out, ms: performance.now() - t0 }));
  });
}
