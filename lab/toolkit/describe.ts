// "Describe the pod" (contract section 7) through the API, for scenarios and failure messages: a pod's phase and
// conditions, each container's state with the waiting/terminated reason (ImagePullBackOff, CrashLoopBackOff, Error
// with its exit code) and the last termination, plus the Events of the pod or of any other object, newest last.
import type { CoreV1Event, V1ContainerStatus, V1Pod } from '@kubernetes/client-node';
import type { Kube } from './kube.ts';
import { statusCode } from './kube.ts';

export interface ContainerSummary {
  name: string;
  image: string;
  ready: boolean;
  restartCount: number;
  state: 'running' | 'waiting' | 'terminated' | 'unknown';
  /** The waiting or terminated reason (e.g. ImagePullBackOff, CrashLoopBackOff, Error, Completed). */
  reason?: string;
  message?: string;
  exitCode?: number;
  startedAt?: string;
  /** How the previous instance ended, when the container has restarted. */
  lastTerminated?: { reason?: string; exitCode?: number; message?: string; finishedAt?: string };
}

export interface EventSummary {
  /** `Kind/name` of the object the event is about. */
  object: string;
  type: string;
  reason: string;
  message: string;
  count: number;
  /** The newest occurrence (lastTimestamp, eventTime or creation time). */
  time?: string;
  source?: string;
}

export interface PodSummary {
  namespace: string;
  name: string;
  phase: string;
  ready: boolean;
  deleting: boolean;
  /** The pod-level reason and message (e.g. Evicted). */
  reason?: string;
  message?: string;
  node?: string;
  podIP?: string;
  labels: Record<string, string>;
  conditions: Array<{ type: string; status: string; reason?: string; message?: string }>;
  initContainers: ContainerSummary[];
  containers: ContainerSummary[];
  events: EventSummary[];
}

function iso(t: unknown): string | undefined {
  if (t === undefined || t === null || t === '') return undefined;
  return t instanceof Date ? t.toISOString() : String(t);
}

export function summarizeContainer(
  spec: { name: string; image?: string },
  st: V1ContainerStatus | undefined,
): ContainerSummary {
  const out: ContainerSummary = {
    name: spec.name,
    image: st?.image && !st.image.startsWith('sha256:') ? st.image : (spec.image ?? ''),
    ready: st?.ready ?? false,
    restartCount: st?.restartCount ?? 0,
    state: 'unknown',
  };
  const s = st?.state;
  if (s?.running) {
    out.state = 'running';
    out.startedAt = iso(s.running.startedAt);
  } else if (s?.waiting) {
    out.state = 'waiting';
    out.reason = s.waiting.reason;
    out.message = s.waiting.message;
  } else if (s?.terminated) {
    out.state = 'terminated';
    out.reason = s.terminated.reason;
    out.message = s.terminated.message;
    out.exitCode = s.terminated.exitCode;
  }
  const last = st?.lastState?.terminated;
  if (last) {
    out.lastTerminated = {
      reason: last.reason,
      exitCode: last.exitCode,
      message: last.message,
      finishedAt: iso(last.finishedAt),
    };
  }
  return out;
}

export function summarizeEvent(e: CoreV1Event): EventSummary {
  const src = e.source?.component ?? e.reportingComponent;
  return {
    object: `${e.involvedObject?.kind ?? '?'}/${e.involvedObject?.name ?? '?'}`,
    type: e.type ?? 'Normal',
    reason: e.reason ?? '',
    message: (e.message ?? '').trim(),
    count: e.count ?? e.series?.count ?? 1,
    time: iso(e.lastTimestamp ?? e.eventTime ?? e.firstTimestamp ?? e.metadata?.creationTimestamp),
    source: src || undefined,
  };
}

/** A pod as `kubectl describe pod` reads it, without the API calls (events are passed in). */
export function summarizePod(pod: V1Pod, events: EventSummary[] = []): PodSummary {
  const statuses = pod.status?.containerStatuses ?? [];
  const initStatuses = pod.status?.initContainerStatuses ?? [];
  const conditions = (pod.status?.conditions ?? []).map((c) => ({
    type: c.type,
    status: c.status,
    reason: c.reason,
    message: c.message,
  }));
  return {
    namespace: pod.metadata?.namespace ?? '',
    name: pod.metadata?.name ?? '',
    phase: pod.status?.phase ?? 'Unknown',
    ready: conditions.some((c) => c.type === 'Ready' && c.status === 'True'),
    deleting: !!pod.metadata?.deletionTimestamp,
    reason: pod.status?.reason,
    message: pod.status?.message,
    node: pod.spec?.nodeName,
    podIP: pod.status?.podIP,
    labels: pod.metadata?.labels ?? {},
    conditions,
    initContainers: (pod.spec?.initContainers ?? []).map((c) =>
      summarizeContainer(
        c,
        initStatuses.find((s) => s.name === c.name),
      ),
    ),
    containers: (pod.spec?.containers ?? []).map((c) =>
      summarizeContainer(
        c,
        statuses.find((s) => s.name === c.name),
      ),
    ),
    events,
  };
}

/** Why a pod is not running and ready, one phrase per cause; empty when it is Running and Ready. */
export function notReadyReasons(s: PodSummary): string[] {
  const out: string[] = [];
  if (s.deleting) out.push('being deleted');
  if (s.reason) out.push(`pod ${s.reason}${s.message ? `: ${s.message}` : ''}`);
  for (const c of [...s.initContainers, ...s.containers]) {
    if (c.state === 'running' && c.ready) continue;
    if (s.initContainers.includes(c) && c.state === 'terminated' && c.exitCode === 0) continue;
    let why = `container ${c.name} ${c.state}`;
    if (c.reason) why += ` (${c.reason}${c.exitCode !== undefined ? `, exit code ${c.exitCode}` : ''})`;
    if (c.state === 'running' && !c.ready) why += ', not ready';
    if (c.message) why += `: ${c.message}`;
    if (c.lastTerminated)
      why += `; last terminated ${c.lastTerminated.reason ?? ''} exit code ${c.lastTerminated.exitCode ?? '?'}`;
    out.push(why);
  }
  if (!out.length && (s.phase !== 'Running' || !s.ready)) {
    const cond = s.conditions.find((c) => c.status !== 'True' && (c.reason || c.message));
    out.push(`phase ${s.phase}${cond ? `, ${cond.type}: ${cond.reason ?? ''} ${cond.message ?? ''}`.trimEnd() : ''}`);
  }
  return out;
}

/** A compact text in the spirit of `kubectl describe pod`, for failure messages and reports. */
export function formatPodSummary(s: PodSummary): string {
  const lines = [
    `Pod ${s.namespace}/${s.name}: ${s.phase}${s.ready ? ', Ready' : ', not Ready'}${s.deleting ? ', Terminating' : ''}`,
  ];
  if (s.reason || s.message) lines.push(`  Reason: ${s.reason ?? ''} ${s.message ?? ''}`.trimEnd());
  for (const c of [...s.initContainers, ...s.containers]) {
    let state = `  ${c.name} (${c.image}): ${c.state}`;
    if (c.reason) state += ` ${c.reason}`;
    if (c.exitCode !== undefined) state += ` exit code ${c.exitCode}`;
    state += `, ready=${c.ready}, restarts=${c.restartCount}`;
    lines.push(state);
    if (c.message) lines.push(`    ${c.message}`);
    if (c.lastTerminated) {
      lines.push(
        `    last state: terminated ${c.lastTerminated.reason ?? ''} exit code ${c.lastTerminated.exitCode ?? '?'}`,
      );
    }
  }
  const bad = s.conditions.filter((c) => c.status !== 'True');
  if (bad.length)
    lines.push(
      `  Conditions: ${bad.map((c) => `${c.type}=${c.status}${c.reason ? ` (${c.reason})` : ''}`).join(', ')}`,
    );
  lines.push(s.events.length ? '  Events:' : '  Events: <none>');
  for (const e of s.events) {
    lines.push(
      `    ${e.type.padEnd(7)} ${e.reason.padEnd(16)} ${e.count > 1 ? `(x${e.count}) ` : ''}${e.source ? `${e.source}: ` : ''}${e.message}`,
    );
  }
  return lines.join('\n');
}

function eventTime(e: EventSummary): number {
  return e.time ? Date.parse(e.time) || 0 : 0;
}

/** The Events about one object (core/v1, by involvedObject), oldest first — what `kubectl describe` lists. */
export async function eventsFor(
  kube: Kube,
  obj: { kind: string; name: string; namespace: string; uid?: string },
): Promise<EventSummary[]> {
  const fieldSelector = [
    `involvedObject.kind=${obj.kind}`,
    `involvedObject.name=${obj.name}`,
    ...(obj.uid ? [`involvedObject.uid=${obj.uid}`] : []),
  ].join(',');
  const list = await kube.core.listNamespacedEvent({ namespace: obj.namespace, fieldSelector });
  return list.items
    .filter((e) => e.involvedObject?.kind === obj.kind && e.involvedObject?.name === obj.name)
    .filter((e) => !obj.uid || !e.involvedObject?.uid || e.involvedObject.uid === obj.uid)
    .map(summarizeEvent)
    .sort((a, b) => eventTime(a) - eventTime(b));
}

/** Summaries of one pod (by name) or of every pod matching a selector, each with its events. */
export async function describePods(
  kube: Kube,
  t: { namespace: string; pod?: string; labelSelector?: string },
): Promise<PodSummary[]> {
  let pods: V1Pod[];
  if (t.pod) {
    try {
      pods = [await kube.core.readNamespacedPod({ name: t.pod, namespace: t.namespace })];
    } catch (err) {
      if (statusCode(err) === 404) return [];
      throw err;
    }
  } else {
    pods = (await kube.core.listNamespacedPod({ namespace: t.namespace, labelSelector: t.labelSelector })).items;
  }
  const out: PodSummary[] = [];
  for (const p of pods) {
    const events = await eventsFor(kube, {
      kind: 'Pod',
      name: p.metadata!.name!,
      namespace: t.namespace,
      uid: p.metadata?.uid,
    });
    out.push(summarizePod(p, events));
  }
  return out;
}

/** The text of describePods(), or a line saying that nothing matched. */
export async function describePodsText(
  kube: Kube,
  t: { namespace: string; pod?: string; labelSelector?: string },
): Promise<string> {
  const pods = await describePods(kube, t);
  if (!pods.length) return `no pods in namespace ${t.namespace} match ${t.pod ?? t.labelSelector}`;
  return pods.map(formatPodSummary).join('\n');
}
