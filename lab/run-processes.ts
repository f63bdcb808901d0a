// The processes a test run started and left behind. `npm test` (scripts/test.ts) marks its run in the environment
// (GWLAB_TEST_RUN=<a mark of its own>), which every process it starts inherits: the vitest processes, the tools, the lab
// processes (lab:up spawns them with its environment) and the kubectl port-forwards; a pod does not (the kubelet gives
// it the pod's environment), and its lab process stops it. A run stopped by SIGINT or SIGTERM ends its vitest
// processes before their global teardown runs, which left the scenario and conformance labs running (measured:
// Ctrl-C or SIGTERM during the conformance project, 1 lab process and its pods left each time); after its vitest
// processes have exited, the run stops what still carries its mark. The /proc scan is the one the lab's orphan sweep
// uses (embedded/node/runtime/orphans.ts scanEnvironments); Linux only, as the embedded lab is.
import { readFileSync } from 'node:fs';
import { scanEnvironments } from './embedded/node/runtime/orphans.ts';
import { pidAlive } from './embedded/process.ts';

export const RUN_ENV = 'GWLAB_TEST_RUN';

export interface RunProcess {
  pid: number;
  cmd: string;
}

/** Live processes (other than this one) whose environment carries GWLAB_TEST_RUN=<runId>. */
export function processesOfRun(runId: string): RunProcess[] {
  const mark = `${RUN_ENV}=${runId}\0`;
  return scanEnvironments((pid, env) => {
    if (!env.startsWith(mark) && !env.includes(`\0${mark}`)) return undefined;
    let cmd = '';
    try {
      cmd = readFileSync(`/proc/${pid}/cmdline`, 'latin1').replaceAll('\0', ' ').trim();
    } catch {}
    return { pid, cmd };
  });
}

/**
 * Stops the run's processes: SIGTERM (a lab process then stops its pods), SIGKILL for any still there after
 * `graceMs`. Returns what it found.
 */
export async function stopProcessesOfRun(runId: string, graceMs = 30_000): Promise<RunProcess[]> {
  const found = processesOfRun(runId);
  for (const p of found) {
    try {
      process.kill(p.pid, 'SIGTERM');
    } catch {}
  }
  const deadline = Date.now() + graceMs;
  while (found.some((p) => pidAlive(p.pid)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  for (const p of found) {
    try {
      if (pidAlive(p.pid)) process.kill(p.pid, 'SIGKILL');
    } catch {}
  }
  return found;
}
