// What Linux's /proc says about a process and the machine, for the benchmarks' side figures (RSS, CPU per request,
// run-queue waits, CPU pressure). Every bench reads these the same way; proc(5) documents the fields.
import { readFileSync } from 'node:fs';

/** Clock ticks per second of /proc/<pid>/stat's utime and stime (USER_HZ, 100 on Linux). */
const CLOCK_TICKS = 100;

/** Resident set size of a process, MB (VmRSS of /proc/<pid>/status); NaN when it is not there. */
export function rssMb(pid: number | 'self'): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : Number.NaN;
}

/** Clock ticks of CPU (utime + stime) a process has used, from /proc/<pid>/stat. */
function cpuTicks(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

/** CPU seconds (user + system) a process has used. */
export const cpuSeconds = (pid: number) => cpuTicks(pid) / CLOCK_TICKS;

/** CPU milliseconds (user + system) a process has used. */
export const cpuMs = (pid: number) => (cpuTicks(pid) * 1000) / CLOCK_TICKS;

/** Microseconds during which some runnable task waited for a CPU (Linux PSI), or undefined without PSI. */
export function cpuPressureUs(): number | undefined {
  try {
    const m = /^some .*total=(\d+)/m.exec(readFileSync('/proc/pressure/cpu', 'utf8'));
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** Machine-wide CPU jiffies (/proc/stat `cpu` line) and the number of runnable threads at this instant. */
export function machineCpu(): { total: number; idle: number; steal: number; running: number } {
  const text = readFileSync('/proc/stat', 'utf8');
  const f = text.slice(0, text.indexOf('\n')).trim().split(/\s+/).slice(1, 9).map(Number);
  const [user, nice, system, idle, iowait, irq, softirq, steal] = f as [
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  return {
    total: user + nice + system + idle + iowait + irq + softirq + steal,
    idle: idle + iowait,
    steal,
    running: Number(/procs_running (\d+)/.exec(text)?.[1] ?? 0),
  };
}

/**
 * CPU time and run-queue wait (ms) of a process's main thread (/proc/<pid>/schedstat): the wait is the time it was
 * runnable while another thread had the CPU, i.e. how long it waited to be scheduled.
 */
export function schedMs(pid: number | 'self'): { runMs: number; waitMs: number } {
  const [run, wait] = readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ').map(Number);
  return { runMs: run! / 1e6, waitMs: wait! / 1e6 };
}
