// Finds and kills pod processes by the environment tags every pod process carries (GWLAB_LAB, GWLAB_POD, and the
// lab process instance GWLAB_RUN), by scanning /proc/<pid>/environ. Used by the sentinel after a lab crash, by
// `lab:up` to clean up after a previous crash, and by tests to prove that nothing survived.
import { readdirSync, readFileSync } from 'node:fs';

export const TAG_LAB = 'GWLAB_LAB';
export const TAG_POD = 'GWLAB_POD';
export const TAG_RUN = 'GWLAB_RUN';
export const TAG_CONTAINER = 'GWLAB_CONTAINER';

export interface TaggedProcess {
  pid: number;
  lab: string;
  pod?: string;
  run?: string;
  container?: string;
}

export interface TagFilter {
  lab?: string;
  run?: string;
  /**
   * Only the runs of this lab process (run tags are `<lab process pid>-<random>`): two labs of one name under two
   * GWLAB_HOMEs (two soaks, a test beside a user's lab) share the lab tag, and a lab:down of one must not kill the
   * other's pods.
   */
  labPid?: number;
  pod?: string;
  container?: string;
}

function tagsOf(pid: number, env: string): TaggedProcess | undefined {
  if (!env.includes('GWLAB_LAB=')) return undefined;
  const tags: Record<string, string> = {};
  for (const kv of env.split('\0')) {
    if (!kv.startsWith('GWLAB_')) continue;
    const eq = kv.indexOf('=');
    tags[kv.slice(0, eq)] = kv.slice(eq + 1);
  }
  if (!tags[TAG_LAB]) return undefined;
  return { pid, lab: tags[TAG_LAB], pod: tags[TAG_POD], run: tags[TAG_RUN], container: tags[TAG_CONTAINER] };
}

/**
 * What `pick` makes of each live process's environment (/proc/<pid>/environ, NUL-separated), this one excluded;
 * processes it returns undefined for, and those gone or not ours to read, are left out. Empty off Linux.
 */
export function scanEnvironments<T>(pick: (pid: number, environ: string) => T | undefined): T[] {
  const found: T[] = [];
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return found; // not Linux: the embedded backend is Linux-only
  }
  for (const e of entries) {
    const pid = Number(e);
    if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) continue;
    let env: string;
    try {
      env = readFileSync(`/proc/${pid}/environ`, 'latin1');
    } catch {
      continue; // gone, a zombie, or not ours to read
    }
    const t = pick(pid, env);
    if (t !== undefined) found.push(t);
  }
  return found;
}

export function findTaggedProcesses(filter: TagFilter = {}): TaggedProcess[] {
  return scanEnvironments((pid, env) => {
    const t = tagsOf(pid, env);
    if (!t) return undefined;
    if (filter.lab !== undefined && t.lab !== filter.lab) return undefined;
    if (filter.run !== undefined && t.run !== filter.run) return undefined;
    if (filter.labPid !== undefined && !t.run?.startsWith(`${filter.labPid}-`)) return undefined;
    if (filter.pod !== undefined && t.pod !== filter.pod) return undefined;
    if (filter.container !== undefined && t.container !== filter.container) return undefined;
    return t;
  });
}

/**
 * Kills every matching process, repeating the scan until none is left (a process may fork while the sweep runs) or
 * `timeoutMs` passes. Resolves with what it signalled.
 */
export async function killTaggedProcesses(
  filter: TagFilter,
  opts: { signal?: NodeJS.Signals; timeoutMs?: number } = {},
): Promise<TaggedProcess[]> {
  if (!filter.lab && !filter.run) throw new Error('killTaggedProcesses: give at least lab or run');
  const signal = opts.signal ?? 'SIGKILL';
  const deadline = Date.now() + (opts.timeoutMs ?? 5000);
  const killed = new Map<number, TaggedProcess>();
  for (;;) {
    const procs = findTaggedProcesses(filter);
    if (procs.length === 0) break;
    for (const p of procs) {
      try {
        process.kill(p.pid, signal);
        killed.set(p.pid, p);
      } catch {
        // already gone
      }
    }
    if (Date.now() > deadline) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  return [...killed.values()];
}
