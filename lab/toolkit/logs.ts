// Container logs "since a mark", read through the pods/log API (so it works on every backend), for assertions such as
// "after this request the proxy logged a pool line". markLogs() records where each container's log ends now; since()
// returns only what was logged after that, across container restarts (the previous instance's tail is read with
// `previous=true`), pods that appeared after the mark (a rollout) and pods that went away since (their lines as last
// read are kept).
//
// The mark is a position in time taken from the log itself — the timestamp of the last line (pods/log `timestamps=true`)
// — so neither the local clock nor a clock skew to the node matters. Timestamps are compared at millisecond precision,
// and the lines already present in the mark's millisecond are counted and skipped, so nothing is lost or repeated when
// lines share a millisecond (the embedded node's sub-millisecond digits are not monotonic; a kubelet's are).
import type { CoreV1Api, V1Pod } from '@kubernetes/client-node';
import type { Kube } from './kube.ts';
import { statusCode } from './kube.ts';
import { waitFor } from './wait.ts';

export interface LogTarget {
  namespace: string;
  /** One pod by name (its later restarts are followed), or every pod matching `labelSelector` (new ones included). */
  pod?: string;
  labelSelector?: string;
  /** Only this container (default: every container of each pod). */
  container?: string;
}

export interface LogLine {
  pod: string;
  container: string;
  /** The timestamp the node recorded (RFC 3339). */
  time: string;
  text: string;
}

export interface LogMark {
  /** Lines logged after the mark, pod by pod (oldest pod first), container by container, each in log order. */
  since(): Promise<string[]>;
  /** The same, with pod, container and timestamp. */
  entries(): Promise<LogLine[]>;
  /** Polls since() until `match` holds (a RegExp: some line matches); returns the lines. */
  waitFor(
    what: string,
    match: RegExp | ((lines: string[]) => boolean),
    opts?: { timeoutMs?: number },
  ): Promise<string[]>;
}

/** Where one container's log stood at the mark. */
export interface ContainerMark {
  /** Millisecond of the last line at the mark; -Infinity when the container had logged nothing. */
  lastMs: number;
  /** Lines in the log within that millisecond at the mark (they are before the mark). */
  ties: number;
  restartCount: number;
}

export interface TimedLine {
  ms: number;
  time: string;
  text: string;
}

/** Parses `kubectl logs --timestamps` output: `<RFC 3339 time> <text>` per line. Lines without a time are skipped. */
export function parseTimestamped(body: string): TimedLine[] {
  const out: TimedLine[] = [];
  for (const line of body.split('\n')) {
    if (!line) continue;
    const sp = line.indexOf(' ');
    const time = sp < 0 ? line : line.slice(0, sp);
    const ms = timeMs(time);
    if (Number.isNaN(ms)) continue;
    out.push({ ms, time, text: sp < 0 ? '' : line.slice(sp + 1) });
  }
  return out;
}

/** Milliseconds of an RFC 3339 time with any number of fractional digits (Date.parse wants at most three). */
export function timeMs(t: string): number {
  const m = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d+))?(Z|[+-]\d{2}:\d{2})$/.exec(t);
  if (!m) return Number.NaN;
  return Date.parse(`${m[1]}.${(m[2] ?? '').padEnd(3, '0').slice(0, 3)}${m[3]}`);
}

/** The mark of a log as read now (its last line's millisecond and how many lines share it). */
export function markOf(lines: TimedLine[], restartCount: number): ContainerMark {
  if (!lines.length) return { lastMs: Number.NEGATIVE_INFINITY, ties: 0, restartCount };
  const lastMs = lines[lines.length - 1].ms;
  let ties = 0;
  for (let i = lines.length - 1; i >= 0 && lines[i].ms === lastMs; i--) ties++;
  return { lastMs, ties, restartCount };
}

/**
 * The lines after a mark from the instances read now, oldest first (the previous instance, then the current one).
 * Lines of the mark's millisecond are skipped up to the number seen at the mark.
 */
export function afterMark(mark: ContainerMark | undefined, instances: TimedLine[][]): TimedLine[] {
  if (!mark) return instances.flat();
  let skip = mark.ties;
  const out: TimedLine[] = [];
  for (const inst of instances) {
    for (const l of inst) {
      if (l.ms < mark.lastMs) continue;
      if (l.ms === mark.lastMs && skip > 0) {
        skip--;
        continue;
      }
      out.push(l);
    }
  }
  return out;
}

const MARK_TAIL_LINES = 1000;
/** Slack on the server-side sinceSeconds bound, for a node clock that runs ahead of ours. */
const SKEW_S = 15;

function containerNames(pod: V1Pod, only?: string): string[] {
  const names = (pod.spec?.containers ?? []).map((c) => c.name);
  return only ? names.filter((n) => n === only) : names;
}

function restartCountOf(pod: V1Pod, container: string): number {
  return pod.status?.containerStatuses?.find((s) => s.name === container)?.restartCount ?? 0;
}

/** A log read; a container that has not started (or a previous instance that does not exist) reads as no lines. */
async function readLog(
  core: CoreV1Api,
  namespace: string,
  pod: string,
  container: string,
  opts: { previous?: boolean; tailLines?: number; sinceSeconds?: number },
): Promise<TimedLine[] | undefined> {
  try {
    const body = await core.readNamespacedPodLog({ name: pod, namespace, container, timestamps: true, ...opts });
    return parseTimestamped(typeof body === 'string' ? body : String(body ?? ''));
  } catch (err) {
    const code = statusCode(err);
    if (code === 400) return []; // waiting to start, or no previous terminated instance
    if (code === 404) return undefined; // the pod is gone
    throw err;
  }
}

async function listPods(kube: Kube, t: LogTarget): Promise<V1Pod[]> {
  if (t.pod) {
    try {
      return [await kube.core.readNamespacedPod({ name: t.pod, namespace: t.namespace })];
    } catch (err) {
      if (statusCode(err) === 404) return [];
      throw err;
    }
  }
  const pods = (await kube.core.listNamespacedPod({ namespace: t.namespace, labelSelector: t.labelSelector })).items;
  return pods.sort((a, b) =>
    String(a.metadata?.creationTimestamp ?? '').localeCompare(String(b.metadata?.creationTimestamp ?? '')),
  );
}

/** The mark after a read: the current instance's last line, or (nothing logged by it yet) the newest line seen. */
export function advanceMark(
  mark: ContainerMark | undefined,
  previous: TimedLine[] | undefined,
  current: TimedLine[],
  restartCount: number,
): ContainerMark {
  if (current.length) return markOf(current, restartCount);
  const lastPrevious = previous?.length ? previous[previous.length - 1].ms : Number.NEGATIVE_INFINITY;
  return { lastMs: Math.max(mark?.lastMs ?? Number.NEGATIVE_INFINITY, lastPrevious), ties: 0, restartCount };
}

export async function markLogs(kube: Kube, t: LogTarget): Promise<LogMark> {
  if (!t.pod && !t.labelSelector) throw new Error('markLogs: give a pod or a labelSelector');
  const core = kube.core;
  // Per `<pod uid>/<container>`: where its log was read up to, and the lines after the original mark so far. Each
  // since() reads only what came after the last read (plus the clock-skew slack), so polling stays cheap on a busy
  // log. Pods that appear after the mark start with no mark: all their lines count.
  const state = new Map<string, { mark?: ContainerMark; lines: LogLine[] }>();
  const podOrder: string[] = [];
  const podContainers = new Map<string, string[]>();

  for (const pod of await listPods(kube, t)) {
    for (const c of containerNames(pod, t.container)) {
      const lines = await readLog(core, t.namespace, pod.metadata!.name!, c, { tailLines: MARK_TAIL_LINES });
      state.set(`${pod.metadata!.uid}/${c}`, { mark: markOf(lines ?? [], restartCountOf(pod, c)), lines: [] });
    }
  }

  const readContainer = async (pod: V1Pod, c: string): Promise<void> => {
    const key = `${pod.metadata!.uid}/${c}`;
    const name = pod.metadata!.name!;
    const st = state.get(key) ?? { lines: [] };
    state.set(key, st);
    const mark = st.mark;
    const restarts = restartCountOf(pod, c);
    const sinceSeconds =
      mark && Number.isFinite(mark.lastMs)
        ? Math.max(1, Math.ceil((Date.now() - mark.lastMs) / 1000) + SKEW_S)
        : undefined;
    // The instance that was current at the last read has ended: its tail is in the previous log. (Older ones are
    // gone, as with kubectl logs --previous.)
    let previous: TimedLine[] | undefined;
    if (restarts > (mark?.restartCount ?? 0)) {
      previous = await readLog(core, t.namespace, name, c, { previous: true, sinceSeconds });
      if (previous === undefined) return; // the pod is gone: keep what was read
    }
    const current = await readLog(core, t.namespace, name, c, { sinceSeconds });
    if (current === undefined) return;
    for (const l of afterMark(mark, previous ? [previous, current] : [current])) {
      st.lines.push({ pod: name, container: c, time: l.time, text: l.text });
    }
    st.mark = advanceMark(mark, previous, current, restarts);
  };

  const entries = async (): Promise<LogLine[]> => {
    for (const pod of await listPods(kube, t)) {
      const uid = pod.metadata!.uid!;
      if (!podOrder.includes(uid)) podOrder.push(uid);
      const names = containerNames(pod, t.container);
      podContainers.set(uid, names);
      for (const c of names) await readContainer(pod, c);
    }
    return podOrder.flatMap((uid) =>
      (podContainers.get(uid) ?? []).flatMap((c) => state.get(`${uid}/${c}`)?.lines ?? []),
    );
  };

  return {
    entries,
    since: async () => (await entries()).map((l) => l.text),
    waitFor: (what, match, opts = {}) =>
      waitFor(
        what,
        async () => {
          const lines = (await entries()).map((l) => l.text);
          const ok = match instanceof RegExp ? lines.some((l) => match.test(l)) : match(lines);
          return {
            ok,
            value: lines,
            seen: `${lines.length} lines since the mark; last: ${lines.slice(-3).join(' | ')}`,
          };
        },
        { timeoutMs: opts.timeoutMs ?? 30_000, intervalMs: 250 },
      ),
  };
}
