// Writes the statuses the pipeline computes (read through StatusSource, so this knows nothing of the pipeline) to
// the status subresource, only when they differ from what the object has: conditions keep their lastTransitionTime
// while their status stays the same, and other controllers' entries (HTTPRoute parents, policy ancestors) are left
// alone. Writes are queued per object and retried with backoff; conditions that turn bad become Warning Events.
import { isDeepStrictEqual } from 'node:util';
import { CustomObjectsApi, type KubeConfig, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import type { Logger } from '../../shared/log.ts';
import type { Collection, InputCollection } from '../krt/collection.ts';
import { watchedKind } from '../kube/watched.ts';
import type { Metrics } from '../metrics.ts';
import { CONTROLLER_NAME, type Condition } from '../model.ts';
import { WorkQueue } from '../work-queue.ts';
import type { StatusUpdate } from './build.ts';
import type { EventSink } from './events.ts';

type Json = Record<string, any>;

/** The kind of each status resource; its group and version come from the table of watched kinds. */
const KIND_OF: Record<StatusUpdate['resource'], string> = {
  gatewayclasses: 'GatewayClass',
  gateways: 'Gateway',
  httproutes: 'HTTPRoute',
  grpcroutes: 'GRPCRoute',
  tcproutes: 'TCPRoute',
  udproutes: 'UDPRoute',
  tlsroutes: 'TLSRoute',
  listenersets: 'ListenerSet',
  trafficpolicies: 'TrafficPolicy',
  listenerpolicies: 'ListenerPolicy',
  gatewayextensions: 'GatewayExtension',
  backendtlspolicies: 'BackendTLSPolicy',
  backendconfigpolicies: 'BackendConfigPolicy',
};

function resourceOf(u: StatusUpdate): { group: string; version: string; kind: string; apiVersion: string } {
  const kind = KIND_OF[u.resource];
  const apiVersion = watchedKind(kind)!.apiVersion;
  const [group, version] = apiVersion.split('/');
  return { group, version, kind, apiVersion };
}

/** What the writer reads (the pipeline): the statuses to write, and the objects they belong to. */
export interface StatusSource {
  statusCollections(): Collection<StatusUpdate>[];
  inputFor(kind: string): InputCollection<any> | undefined;
}

/** Gives each desired condition the existing lastTransitionTime when its status is unchanged, else `now`. */
export function withTransitionTimes(
  desired: Omit<Condition, 'lastTransitionTime'>[],
  existing: Condition[] | undefined,
  now: string,
): Condition[] {
  return desired.map((c) => {
    const old = existing?.find((e) => e.type === c.type);
    return {
      ...c,
      lastTransitionTime: old && old.status === c.status && old.lastTransitionTime ? old.lastTransitionTime : now,
    };
  });
}

const sameRef = (a: Json, b: Json) => isDeepStrictEqual(a, b);

/**
 * A list of per-controller entries (a route's `parents`, a policy's `ancestors`, keyed by `refField`): the other
 * controllers' entries as they are, ours as desired with the transition times of our existing entry for the same ref.
 */
function mergeControllerEntries(current: unknown, desired: unknown, refField: string, now: string) {
  const existing = (current as Json[] | undefined) ?? [];
  const others = existing.filter((e) => e.controllerName !== CONTROLLER_NAME);
  const ours = (desired as Json[]).map((d) => ({
    ...d,
    conditions: withTransitionTimes(
      d.conditions,
      existing.find((e) => e.controllerName === CONTROLLER_NAME && sameRef(e[refField], d[refField]))?.conditions,
      now,
    ),
  }));
  return { existing, others, ours };
}

/** The full status to write: ours merged into what the object has. Undefined when there is nothing of ours. */
export function mergeStatus(
  resource: StatusUpdate['resource'],
  desired: Json,
  current: Json | undefined,
  now: string,
): Json | undefined {
  const cur = current ?? {};
  switch (resource) {
    case 'gatewayclasses':
    case 'gatewayextensions':
      return { ...cur, conditions: withTransitionTimes(desired.conditions, cur.conditions, now) };
    case 'gateways':
    case 'listenersets': {
      // attachedListenerSets is ours: written while some ListenerSet names the Gateway, removed after.
      const { attachedListenerSets: _was, ...kept } = cur;
      return {
        ...kept,
        ...(desired.addresses ? { addresses: desired.addresses } : {}),
        ...(desired.attachedListenerSets !== undefined ? { attachedListenerSets: desired.attachedListenerSets } : {}),
        conditions: withTransitionTimes(desired.conditions, cur.conditions, now),
        listeners: (desired.listeners as Json[]).map((l) => ({
          ...l,
          conditions: withTransitionTimes(
            l.conditions,
            (cur.listeners as Json[] | undefined)?.find((x) => x.name === l.name)?.conditions,
            now,
          ),
        })),
      };
    }
    case 'httproutes':
    case 'grpcroutes':
    case 'tcproutes':
    case 'udproutes':
    case 'tlsroutes': {
      const m = mergeControllerEntries(cur.parents, desired.parents, 'parentRef', now);
      if (!m.ours.length && m.others.length === m.existing.length) return undefined;
      return { ...cur, parents: [...m.others, ...m.ours] };
    }
    case 'backendtlspolicies': {
      const m = mergeControllerEntries(cur.ancestors, desired.ancestors, 'ancestorRef', now);
      if (!m.ours.length && m.others.length === m.existing.length) return undefined;
      return { ...cur, ancestors: [...m.others, ...m.ours] };
    }
    case 'trafficpolicies':
    case 'backendconfigpolicies':
    case 'listenerpolicies': {
      const m = mergeControllerEntries(cur.ancestors, desired.ancestors, 'ancestorRef', now);
      return {
        ...cur,
        ancestors: [...m.others, ...m.ours],
        conditions: withTransitionTimes(desired.conditions, cur.conditions, now),
      };
    }
  }
}

export interface StatusPatcher {
  patch(u: StatusUpdate, status: Json): Promise<void>;
}

export function kubeStatusPatcher(kc: KubeConfig): StatusPatcher {
  const api = kc.makeApiClient(CustomObjectsApi);
  const opts = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
  return {
    async patch(u, status) {
      const r = resourceOf(u);
      const body = { status };
      if (u.namespace) {
        await api.patchNamespacedCustomObjectStatus(
          { group: r.group, version: r.version, namespace: u.namespace, plural: u.resource, name: u.name, body },
          opts,
        );
      } else {
        await api.patchClusterCustomObjectStatus(
          { group: r.group, version: r.version, plural: u.resource, name: u.name, body },
          opts,
        );
      }
    },
  };
}

export class StatusWriter {
  private readonly queue: WorkQueue<StatusUpdate>;
  private readonly unsubs: (() => void)[] = [];
  private readonly p: StatusSource;
  private readonly patcher: StatusPatcher;
  private readonly log: Logger;
  private readonly metrics?: Metrics;
  writes = 0;
  /** Since the queue last ran empty: the objects written, and how many needed no write. */
  private written: string[] = [];
  private unchanged = 0;

  private readonly events?: EventSink;

  constructor(p: StatusSource, patcher: StatusPatcher, log: Logger, metrics?: Metrics, events?: EventSink) {
    this.p = p;
    this.patcher = patcher;
    this.log = log;
    this.metrics = metrics;
    this.events = events;
    this.queue = new WorkQueue<StatusUpdate>({
      work: async (u) => {
        if (await this.write(u)) this.written.push(u.key);
        else this.unchanged++;
      },
      failed: (u, err, attempt) => {
        this.metrics?.statusWrites.inc({ resource: u.resource, result: 'error' });
        if ((err as { code?: number }).code === 404) return undefined;
        const delay = Math.min(200 * 2 ** attempt, 30_000);
        this.log.warn('status write failed; retrying', { object: u.key, attempt, retryInMs: delay, err: err as Error });
        return delay;
      },
      retry: (u) => this.latest(u),
      drained: (ms) => {
        // One line per sync with the API server: what was written (details at debug).
        if (this.written.length) {
          this.log.info('statuses written', {
            written: this.written.length,
            unchanged: this.unchanged,
            ms: Math.round(ms),
            objects: this.written.slice(0, 10),
          });
        }
        this.written = [];
        this.unchanged = 0;
      },
    });
  }

  start(): void {
    for (const c of this.p.statusCollections()) {
      for (const u of c.list()) this.enqueue(u);
      this.unsubs.push(
        c.subscribe((events) => {
          for (const e of events) if (e.new) this.enqueue(e.new);
        }),
      );
    }
    // When an object's status changes under us (another writer, a restore), compare again.
    const collFor: Record<StatusUpdate['resource'], string> = {
      gatewayclasses: 'GatewayClassStatuses',
      gateways: 'GatewayStatuses',
      httproutes: 'RouteStatuses',
      grpcroutes: 'GRPCRouteStatuses',
      tcproutes: 'TCPRouteStatuses',
      udproutes: 'UDPRouteStatuses',
      tlsroutes: 'TLSRouteStatuses',
      listenersets: 'ListenerSetStatuses',
      trafficpolicies: 'PolicyStatuses',
      listenerpolicies: 'ListenerPolicyStatuses',
      gatewayextensions: 'ExtensionStatuses',
      backendtlspolicies: 'BackendTLSPolicyStatuses',
      backendconfigpolicies: 'BackendConfigPolicyStatuses',
    };
    const statusColl = Object.fromEntries(this.p.statusCollections().map((c) => [c.name, c]));
    for (const [resource, kind] of Object.entries(KIND_OF) as [StatusUpdate['resource'], string][]) {
      this.unsubs.push(
        this.p.inputFor(kind)!.subscribe((events) => {
          for (const e of events) {
            const u = statusColl[collFor[resource]].get(e.key);
            if (u && e.new) this.enqueue(u);
          }
        }),
      );
    }
  }

  stop(): void {
    this.queue.stop();
    for (const u of this.unsubs) u();
  }

  /** Resolves when the queue is empty and no write is in flight (tests). */
  idle(): Promise<void> {
    return this.queue.idle();
  }

  private enqueue(u: StatusUpdate): void {
    this.queue.add(u);
  }

  private latest(u: StatusUpdate): StatusUpdate | undefined {
    const key = u.namespace ? `${u.namespace}/${u.name}` : u.name;
    return this.p
      .statusCollections()
      .find((c) => c.get(key)?.key === u.key)
      ?.get(key);
  }

  /** A Warning event for each of our conditions that just turned bad (what the control plane could not do). */
  private announce(u: StatusUpdate, obj: { metadata: { uid?: string } }, status: Json, now: string): void {
    if (!this.events) return;
    const conds: Condition[] = [
      ...((status.conditions as Condition[] | undefined) ?? []),
      ...((status.parents as Json[] | undefined) ?? [])
        .filter((x) => x.controllerName === CONTROLLER_NAME)
        .flatMap((x) => x.conditions as Condition[]),
      ...((status.ancestors as Json[] | undefined) ?? [])
        .filter((x) => x.controllerName === CONTROLLER_NAME)
        .flatMap((x) => x.conditions as Condition[]),
    ];
    const seen = new Set<string>();
    for (const c of conds) {
      const bad = (c.type === 'Conflicted' || c.type === 'PartiallyInvalid') === (c.status === 'True');
      if (!bad || c.lastTransitionTime !== now || c.status === 'Unknown') continue;
      const key = `${c.type}/${c.reason}/${c.message}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const r = resourceOf(u);
      this.events.emit(
        {
          apiVersion: r.apiVersion,
          kind: r.kind,
          namespace: u.namespace,
          name: u.name,
          uid: obj.metadata.uid,
        },
        'Warning',
        c.reason,
        `${c.type}=${c.status}: ${c.message}`,
      );
    }
  }

  /** Writes the status when it differs; true when it wrote. */
  private async write(u: StatusUpdate): Promise<boolean> {
    const kind = KIND_OF[u.resource];
    const key = u.namespace ? `${u.namespace}/${u.name}` : u.name;
    const obj = this.p.inputFor(kind)?.get(key);
    if (!obj) return false;
    const current = obj.status as Json | undefined;
    const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    const merged = mergeStatus(u.resource, u.status, current, now);
    if (!merged || isDeepStrictEqual(merged, current ?? {})) return false;
    await this.patcher.patch(u, merged);
    this.writes++;
    this.announce(u, obj, merged, now);
    this.metrics?.statusWrites.inc({ resource: u.resource, result: 'written' });
    this.log.debug('status written', { object: `${u.resource}/${key}`, generation: obj.metadata.generation });
    return true;
  }
}
