// The processes of a test run left behind (run-processes.ts): found by the run's mark in their environment, stopped
// with SIGTERM, or SIGKILL when they ignore it; a process without the mark is left alone.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { processesOfRun, RUN_ENV, stopProcessesOfRun } from './run-processes.ts';

const started: ChildProcess[] = [];
afterAll(() => {
  for (const c of started) c.kill('SIGKILL');
});

function start(env: Record<string, string>, program: string): ChildProcess {
  const c = spawn(process.execPath, ['-e', program], { env: { ...process.env, ...env }, stdio: 'ignore' });
  started.push(c);
  return c;
}

const exited = (c: ChildProcess) =>
  new Promise<void>((r) => (c.exitCode !== null || c.signalCode !== null ? r() : c.once('exit', () => r())));

describe('processes of a test run', () => {
  it('stops the marked ones (SIGKILL for one that ignores SIGTERM) and leaves the others', async () => {
    const run = randomUUID();
    const polite = start({ [RUN_ENV]: run }, 'setInterval(() => {}, 1000)');
    const stubborn = start({ [RUN_ENV]: run }, "process.on('SIGTERM', () => {}); setInterval(() => {}, 1000)");
    const other = start({ [RUN_ENV]: 'another-run' }, 'setInterval(() => {}, 1000)');
    await new Promise((r) => setTimeout(r, 300)); // the handlers installed
    expect(
      processesOfRun(run)
        .map((p) => p.pid)
        .sort(),
    ).toEqual([polite.pid, stubborn.pid].sort());
    const stopped = await stopProcessesOfRun(run, 1000);
    expect(stopped.map((p) => p.pid).sort()).toEqual([polite.pid, stubborn.pid].sort());
    await Promise.all([exited(polite), exited(stubborn)]);
    expect(polite.signalCode).toBe('SIGTERM');
    expect(stubborn.signalCode).toBe('SIGKILL');
    expect(other.exitCode).toBeNull();
    expect(other.signalCode).toBeNull();
    expect(processesOfRun(run)).toEqual([]);
  });
});
