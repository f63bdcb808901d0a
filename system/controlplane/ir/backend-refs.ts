// A route's backendRefs → clusters, for every route kind (HTTPRoute, GRPCRoute, the L4 routes) and the policies that
// name a backend (ext auth, JWKS): a core Service port, allowed across namespaces by a ReferenceGrant; a rule's
// weighted backends, the ones that did not resolve weighted to the blackhole cluster (answered 500, or 503 for gRPC).
import type { BackendObjectRef, HTTPRouteFilter, HTTPRouteRule, ReferenceGrant, Service } from '../model.ts';
import { backendProtocol } from './backend-protocol.ts';
import { headerOps } from './http-settings.ts';
import { missingGrantMessage, referenceAllowed } from './refgrant.ts';
import type { ActionIR, ClusterIR, WeightedClusterIR } from './types.ts';

export const BLACKHOLE_CLUSTER = 'blackhole-cluster';

/** Reads the route depends on; each is a tracked dependency in the pipeline. */
export interface RouteWorld {
  service(namespace: string, name: string): Service | undefined;
  referenceGrants(namespace: string): ReferenceGrant[];
}

export function clusterName(namespace: string, service: string, port: number): string {
  return `kube_${namespace}_${service}_${port}`;
}

interface BackendResolution {
  cluster?: ClusterIR;
  error?: { reason: 'BackendNotFound' | 'RefNotPermitted' | 'InvalidKind'; message: string };
}

export function resolveServiceRef(
  world: RouteWorld,
  from: { group: string; kind: string; namespace: string },
  ref: BackendObjectRef,
  field: string,
): BackendResolution {
  const group = ref.group ?? '';
  const kind = ref.kind ?? 'Service';
  if (group !== '' || kind !== 'Service') {
    return {
      error: {
        reason: 'InvalidKind',
        message: `${field}: ${group || 'core'}/${kind} is not a supported backend kind (use a core Service)`,
      },
    };
  }
  const ns = ref.namespace ?? from.namespace;
  // A reference into the route's own namespace needs no grant: the grants are not read (nor depended on) for it.
  if (ns !== from.namespace) {
    const to = { group: '', kind: 'Service', namespace: ns, name: ref.name };
    if (!referenceAllowed(world.referenceGrants(ns), from, to)) {
      return { error: { reason: 'RefNotPermitted', message: `${field}: ${missingGrantMessage(from, to)}` } };
    }
  }
  const svc = world.service(ns, ref.name);
  if (!svc) return { error: { reason: 'BackendNotFound', message: `${field}: Service ${ns}/${ref.name} not found` } };
  if (ref.port === undefined) {
    return { error: { reason: 'BackendNotFound', message: `${field}.port: required for a Service backend` } };
  }
  const port = (svc.spec?.ports ?? []).find((p) => p.port === ref.port);
  if (!port) {
    const have = (svc.spec?.ports ?? []).map((p) => p.port).join(', ') || 'none';
    return {
      error: {
        reason: 'BackendNotFound',
        message: `${field}: Service ${ns}/${ref.name} has no port ${ref.port} (ports: ${have})`,
      },
    };
  }
  return { cluster: serviceCluster(svc, port) };
}

/**
 * The cluster of a Service port: one object per Service version and port, as it is a function of the two alone and
 * asked for every backendRef (IR objects are never written to: a change makes a copy).
 */
const clustersByService = new WeakMap<Service, Map<number, ClusterIR>>();
function serviceCluster(svc: Service, port: { port: number; appProtocol?: string }): ClusterIR {
  let byPort = clustersByService.get(svc);
  if (!byPort) {
    byPort = new Map();
    clustersByService.set(svc, byPort);
  }
  let cluster = byPort.get(port.port);
  if (!cluster) {
    const ns = svc.metadata.namespace ?? 'default';
    const name = svc.metadata.name;
    cluster = { name: clusterName(ns, name, port.port), namespace: ns, service: name, port: port.port };
    const protocol = backendProtocol(port.appProtocol);
    if (protocol) cluster.protocol = protocol;
    // Shared by every route to that port: frozen, so a writer fails loudly instead of changing them all.
    Object.freeze(cluster);
    byPort.set(port.port, cluster);
  }
  return cluster;
}

/**
 * The rule's weighted backends; with none resolved, a direct answer of `invalidStatus` (HTTPRoute: 500, as the spec
 * asks; GRPCRoute: 503, which gRPC clients read as UNAVAILABLE).
 */
export function forwardAction(
  world: RouteWorld,
  from: { group: string; kind: string; namespace: string },
  rule: { backendRefs?: HTTPRouteRule['backendRefs'] },
  rf: string,
  refErrors: { reason: string; message: string }[],
  clusters: Map<string, ClusterIR>,
  invalidStatus = 500,
): ActionIR {
  const refs = rule.backendRefs ?? [];
  if (!refs.length) return { type: 'direct', status: invalidStatus, reason: `${rf}: no backendRefs` };
  const backends: WeightedClusterIR[] = [];
  refs.forEach((b, bi) => {
    const weight = b.weight ?? 1;
    const res = resolveServiceRef(world, from, b, `${rf}.backendRefs[${bi}]`);
    if (res.error) refErrors.push(res.error);
    if (weight === 0) return;
    if (res.cluster) {
      clusters.set(res.cluster.name, res.cluster);
      const own = backendHeaderOps(b.filters);
      // Two refs to one Service share a weighted cluster entry, unless either has filters of its own.
      const same = own ? undefined : backends.find((x) => x.cluster === res.cluster!.name && !hasOwnHeaders(x));
      if (same) same.weight += weight;
      else backends.push({ cluster: res.cluster.name, weight, ...own });
    } else {
      const bh = backends.find((x) => x.cluster === BLACKHOLE_CLUSTER);
      if (bh) bh.weight += weight;
      else backends.push({ cluster: BLACKHOLE_CLUSTER, weight });
    }
  });
  const live = backends.filter((b) => b.cluster !== BLACKHOLE_CLUSTER);
  if (!live.length) {
    const why = backends.length ? 'no backendRef resolved' : 'every backendRef has weight 0';
    return { type: 'direct', status: invalidStatus, reason: `${rf}: ${why}` };
  }
  return { type: 'forward', backends };
}

/** A backendRef's header filters, or undefined when it has none. */
function backendHeaderOps(filters: HTTPRouteFilter[] | undefined): Partial<WeightedClusterIR> | undefined {
  const request = filters?.find((f) => f.type === 'RequestHeaderModifier');
  const response = filters?.find((f) => f.type === 'ResponseHeaderModifier');
  const requestHeaders = headerOps(request?.requestHeaderModifier);
  const responseHeaders = headerOps(response?.responseHeaderModifier);
  if (!requestHeaders && !responseHeaders) return undefined;
  return { ...(requestHeaders ? { requestHeaders } : {}), ...(responseHeaders ? { responseHeaders } : {}) };
}

function hasOwnHeaders(w: WeightedClusterIR): boolean {
  return w.requestHeaders !== undefined || w.responseHeaders !== undefined;
}
