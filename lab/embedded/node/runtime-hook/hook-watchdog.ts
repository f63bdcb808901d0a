// Pod runtime hook, watchdog part: a Node process of a pod exits when the lab process that runs the pod is gone.
// The runner's prctl(PR_SET_PDEATHSIG) covers the container's first process and the sentinel sweeps the rest; this
// covers Node grandchildren even if both were defeated. The lab is identified by pid and start time (field 22 of
// /proc/<pid>/stat), so a recycled pid does not keep a pod alive.
import { readFileSync } from 'node:fs';

export function processStartTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may contain spaces and parentheses: count fields after the last ')'.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

export function installWatchdog(w: { pid: number; startTime: string; intervalMs?: number }): void {
  const timer = setInterval(() => {
    if (processStartTime(w.pid) !== w.startTime) process.kill(process.pid, 'SIGKILL');
  }, w.intervalMs ?? 1000);
  timer.unref();
}
