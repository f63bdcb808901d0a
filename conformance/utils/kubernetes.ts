// The suite's status waits, as upstream's conformance/utils/kubernetes/helpers.go (Gateway API v1.6.1) does them,
// over the project's Kube client (lab/toolkit/kube.ts): each polls every DefaultPollInterval until its timeout from
// the TimeoutConfig, checks observedGeneration first where upstream does, and matches conditions by type, status
// and (when given) reason.
import { PatchStrategy } from '@kubernetes/client-node';
import type { KObj, Kube } from '../../lab/toolkit/kube.ts';
import { waitFor } from '../../lab/toolkit/wait.ts';
import type { TimeoutConfig } from './config.ts';

export const GW = 'gateway.networking.k8s.io/v1';
export const GROUP = 'gateway.networking.k8s.io';

export interface NN {
  namespace: string;
  name: string;
}

export interface Cond {
  type: string;
  status?: 'True' | 'False' | 'Unknown' | '';
  reason?: string;
}

export interface ParentStatus {
  parentRef: { group?: string; kind?: string; name: string; namespace?: string; sectionName?: string; port?: number };
  controllerName: string;
  conditions: Cond[];
}

/** Upstream's findConditionInList: empty status or reason means any. */
export function findCondition(conds: any[] | undefined, type: string, status = '', reason = ''): boolean {
  return (conds ?? []).some(
    (c) => c.type === type && (status === '' || c.status === status) && (reason === '' || c.reason === reason),
  );
}

export function conditionsMatch(expected: Cond[], actual: any[] | undefined): boolean {
  if ((actual?.length ?? 0) < expected.length) return false;
  return expected.every((c) => findCondition(actual, c.type, c.status ?? '', c.reason ?? ''));
}

/** Upstream's ConditionsHaveLatestObservedGeneration: undefined, or which conditions are stale. */
export function staleConditions(obj: KObj, conds: any[] | undefined): string | undefined {
  const gen = obj.metadata?.generation;
  const stale = (conds ?? []).filter((c) => c.observedGeneration !== gen);
  if (!stale.length) return undefined;
  return `expected observedGeneration to be updated to ${gen} for all conditions, only ${(conds ?? []).length - stale.length}/${(conds ?? []).length} were updated. stale conditions are: ${stale.map((c) => `${c.type} (generation ${c.observedGeneration})`).join(', ')}`;
}

function poll<T>(
  what: string,
  tc: TimeoutConfig,
  timeoutMs: number,
  probe: () => Promise<{ ok: boolean; value?: T; seen?: unknown }>,
) {
  return waitFor<T>(what, probe, { timeoutMs, intervalMs: tc.defaultPollInterval });
}

const get = (kube: Kube, kind: string, nn: NN | string) =>
  typeof nn === 'string' ? kube.get(GW, kind, nn) : kube.get(GW, kind, nn.name, nn.namespace);

/** GWCMustHaveAcceptedConditionTrue (status 'True') and ...Any (''): returns the class's controllerName. */
export async function gwcMustHaveAcceptedCondition(
  kube: Kube,
  tc: TimeoutConfig,
  name: string,
  status: 'True' | '',
): Promise<string> {
  return poll(`GatewayClass ${name} to be Accepted`, tc, tc.gwcMustBeAccepted, async () => {
    const gwc = await get(kube, 'GatewayClass', name);
    if (!gwc) return { ok: false, seen: 'not found' };
    const conds = gwc.status?.conditions;
    const stale = staleConditions(gwc, conds);
    if (stale) return { ok: false, seen: stale };
    return { ok: findCondition(conds, 'Accepted', status), value: gwc.spec.controllerName, seen: conds };
  });
}

/** NamespacesMustBeReady: every Gateway Accepted and Programmed (latest generation), every Pod Ready. */
export async function namespacesMustBeReady(kube: Kube, tc: TimeoutConfig, namespaces: string[]): Promise<void> {
  await poll(`Gateways and Pods in ${namespaces.join(', ')} to be ready`, tc, tc.namespacesMustBeReady, async () => {
    for (const ns of namespaces) {
      for (const gw of await kube.list(GW, 'Gateway', ns)) {
        if (gw.metadata?.annotations?.['gateway-api/skip-this-for-readiness'] === 'true') continue;
        const conds = gw.status?.conditions;
        const stale = staleConditions(gw, conds);
        if (stale) return { ok: false, seen: `Gateway ${ns}/${gw.metadata?.name} ${stale}` };
        if (!findCondition(conds, 'Accepted', 'True'))
          return { ok: false, seen: `${ns}/${gw.metadata?.name} Gateway not Accepted yet: ${JSON.stringify(conds)}` };
        if (!findCondition(conds, 'Programmed', 'True'))
          return { ok: false, seen: `${ns}/${gw.metadata?.name} Gateway not Programmed yet: ${JSON.stringify(conds)}` };
      }
      const pods = await kube.list('v1', 'Pod', ns);
      if (!pods.length) return { ok: false, seen: 'No pods deployed yet' };
      for (const p of pods) {
        const ready = (p.status?.conditions ?? []).some((c: any) => c.type === 'Ready' && c.status === 'True');
        if (!ready && p.status?.phase !== 'Succeeded' && !p.metadata?.deletionTimestamp)
          return { ok: false, seen: `Pod ${ns}/${p.metadata?.name} not ready yet` };
      }
    }
    return { ok: true };
  });
}

/** A Gateway and the listener names given (upstream's GatewayRef; none given = [""], i.e. the first listener). */
export interface GatewayRef extends NN {
  listenerNames?: string[];
}

/** WaitForGatewayAddress: `<address>:<port of the named (or first) listener>` once the status has an address. */
export async function waitForGatewayAddress(kube: Kube, tc: TimeoutConfig, ref: GatewayRef): Promise<string> {
  return poll(`Gateway ${ref.namespace}/${ref.name} to have an address`, tc, tc.gatewayMustHaveAddress, async () => {
    const gw = await get(kube, 'Gateway', ref);
    if (!gw) return { ok: false, seen: 'not found' };
    const stale = staleConditions(gw, gw.status?.conditions);
    if (stale) return { ok: false, seen: stale };
    const name = ref.listenerNames?.[0] ?? '';
    const listener = gw.spec.listeners.find((l: any) => l.name === name) ?? gw.spec.listeners[0];
    const addr = (gw.status?.addresses ?? []).find((a: any) => a.type);
    if (!addr) return { ok: false, seen: gw.status };
    const host = addr.value.includes(':') ? `[${addr.value}]` : addr.value;
    return { ok: true, value: `${host}:${listener.port}` };
  });
}

function parentsMatch(expected: ParentStatus[], actual: any[] | undefined, namespaceRequired: boolean): boolean {
  return expected.every((e) =>
    (actual ?? []).some((a) => {
      if (a.controllerName !== e.controllerName) return false;
      const ar = a.parentRef ?? {};
      if (ar.group !== e.parentRef.group || ar.kind !== e.parentRef.kind || ar.name !== e.parentRef.name) return false;
      if (ar.namespace !== e.parentRef.namespace && (namespaceRequired || ar.namespace !== undefined)) return false;
      return conditionsMatch(e.conditions, a.conditions);
    }),
  );
}

/** RouteMustHaveParents (HTTPRouteMustHaveParents for kind HTTPRoute). */
export async function routeMustHaveParents(
  kube: Kube,
  tc: TimeoutConfig,
  route: NN,
  parents: ParentStatus[],
  namespaceRequired: boolean,
  kind = 'HTTPRoute',
): Promise<void> {
  await poll(
    `${kind} ${route.namespace}/${route.name} to have parents matching expectations`,
    tc,
    tc.routeMustHaveParents,
    async () => {
      const r = await get(kube, kind, route);
      if (!r) return { ok: false, seen: 'not found' };
      for (const p of r.status?.parents ?? []) {
        const stale = staleConditions(r, p.conditions);
        if (stale) return { ok: false, seen: stale };
      }
      return { ok: parentsMatch(parents, r.status?.parents, namespaceRequired), seen: r.status?.parents };
    },
  );
}

/** GatewayListenersMustHaveConditions: every (or each named) listener has every condition. */
export const gatewayListenersMustHaveConditions = (
  kube: Kube,
  tc: TimeoutConfig,
  gw: NN,
  conditions: Cond[],
  listenerNames: string[] = [],
) => listenersMustHaveConditions(kube, tc, 'Gateway', gw, conditions, listenerNames);

/**
 * ListenerSetListenersMustHaveConditions: every (or each named) listener of the ListenerSet has every condition, once
 * the set's conditions carry its latest generation.
 */
export const listenerSetListenersMustHaveConditions = (
  kube: Kube,
  tc: TimeoutConfig,
  ls: NN,
  conditions: Cond[],
  listenerNames: string[] = [],
) => listenersMustHaveConditions(kube, tc, 'ListenerSet', ls, conditions, listenerNames);

async function listenersMustHaveConditions(
  kube: Kube,
  tc: TimeoutConfig,
  kind: 'Gateway' | 'ListenerSet',
  nn: NN,
  conditions: Cond[],
  listenerNames: string[],
): Promise<void> {
  await poll(
    `${kind} ${nn.namespace}/${nn.name} listeners to have ${JSON.stringify(conditions)}`,
    tc,
    kind === 'Gateway' ? tc.gatewayListenersMustHaveConditions : tc.listenerSetListenersMustHaveConditions,
    async () => {
      const o = await get(kube, kind, nn);
      if (kind === 'ListenerSet') {
        if (!o) return { ok: false, seen: 'not found' };
        const stale = staleConditions(o, o.status?.conditions);
        if (stale) return { ok: false, seen: stale };
      }
      const listeners: any[] = o?.status?.listeners ?? [];
      const pending = new Set(listenerNames);
      for (const c of conditions) {
        for (const l of listeners) {
          if (listenerNames.length && !listenerNames.includes(l.name)) continue;
          if (!findCondition(l.conditions, c.type, c.status ?? '', c.reason ?? ''))
            return { ok: false, seen: listeners };
          pending.delete(l.name);
        }
      }
      return { ok: pending.size === 0, seen: listeners };
    },
  );
}

/** GatewayAndHTTPRoutesMustBeAccepted (GatewayAndRoutesMustBeAccepted with usePort): the gateway's `address:port`. */
export async function gatewayAndRoutesMustBeAccepted(
  kube: Kube,
  tc: TimeoutConfig,
  controllerName: string,
  gw: GatewayRef,
  routes: NN[],
  kind = 'HTTPRoute',
): Promise<string> {
  const addr = await waitForGatewayAddress(kube, tc, gw);
  await routesAndParentMustBeAccepted(kube, tc, controllerName, { ...gw, kind: 'Gateway' }, routes, kind);
  return addr;
}

/** Upstream's ResourceRef (NewResourceRef): a Gateway or a ListenerSet, and the listener names given. */
export interface ResourceRef extends GatewayRef {
  kind: 'Gateway' | 'ListenerSet';
}

/**
 * RoutesAndParentMustBeAccepted: each route has an Accepted parent entry for the resource (per listener name given;
 * group and kind as written, namespace required when the route lives elsewhere), then every listener of the resource
 * is ResolvedRefs, Accepted and Programmed (ResourceListenersMustHaveConditions).
 */
export async function routesAndParentMustBeAccepted(
  kube: Kube,
  tc: TimeoutConfig,
  controllerName: string,
  resource: ResourceRef,
  routes: NN[],
  kind = 'HTTPRoute',
): Promise<void> {
  const listeners = resource.listenerNames?.length ? resource.listenerNames : [''];
  for (const route of routes) {
    const parents = listeners.map(() => ({
      parentRef: { group: GROUP, kind: resource.kind, name: resource.name, namespace: resource.namespace },
      controllerName,
      conditions: [{ type: 'Accepted', status: 'True' as const, reason: 'Accepted' }],
    }));
    await routeMustHaveParents(kube, tc, route, parents, route.namespace !== resource.namespace, kind);
  }
  const required: Cond[] = [
    { type: 'ResolvedRefs', status: 'True' },
    { type: 'Accepted', status: 'True' },
    { type: 'Programmed', status: 'True' },
  ];
  if (resource.kind === 'ListenerSet') await listenerSetListenersMustHaveConditions(kube, tc, resource, required);
  else await gatewayListenersMustHaveConditions(kube, tc, resource, required);
}

/**
 * GatewayAndTLSRoutesMustBeAccepted: the Gateway's address and each route Accepted by it (for each listener named),
 * the routes' hostnames (of the last one, as upstream returns them). Unlike the HTTPRoute variant it does not wait for
 * the listeners' conditions.
 */
export async function gatewayAndTLSRoutesMustBeAccepted(
  kube: Kube,
  tc: TimeoutConfig,
  controllerName: string,
  gw: GatewayRef,
  routes: NN[],
): Promise<{ addr: string; hostnames: string[] }> {
  const addr = await waitForGatewayAddress(kube, tc, gw);
  const listeners = gw.listenerNames?.length ? gw.listenerNames : [''];
  let hostnames: string[] = [];
  for (const route of routes) {
    const parents = listeners.map(() => ({
      parentRef: { group: GROUP, kind: 'Gateway', name: gw.name, namespace: gw.namespace },
      controllerName,
      conditions: [{ type: 'Accepted', status: 'True' as const, reason: 'Accepted' }],
    }));
    await routeMustHaveParents(kube, tc, route, parents, route.namespace !== gw.namespace, 'TLSRoute');
    hostnames = (await get(kube, 'TLSRoute', route))?.spec?.hostnames ?? [];
  }
  return { addr, hostnames };
}

/** HTTPRouteMustHaveCondition: a parent entry for the Gateway `gw` has the condition (latest generation). */
export const httpRouteMustHaveCondition = (kube: Kube, tc: TimeoutConfig, route: NN, gw: NN, c: Cond) =>
  routeMustHaveCondition(kube, tc, route, gw, c, 'HTTPRoute');

const conditionTimeouts = {
  HTTPRoute: 'httpRouteMustHaveCondition',
  TCPRoute: 'tcpRouteMustHaveCondition',
  TLSRoute: 'tlsRouteMustHaveCondition',
  UDPRoute: 'udpRouteMustHaveCondition',
} as const;

/** HTTPRouteMustHaveCondition, TCPRouteMustHaveCondition, UDPRouteMustHaveCondition: one rule, each kind's timeout. */
export async function routeMustHaveCondition(
  kube: Kube,
  tc: TimeoutConfig,
  route: NN,
  gw: NN,
  c: Cond,
  kind: keyof typeof conditionTimeouts,
): Promise<void> {
  await poll(
    `${kind} ${route.namespace}/${route.name} to have ${JSON.stringify(c)} for ${gw.namespace}/${gw.name}`,
    tc,
    tc[conditionTimeouts[kind]],
    async () => {
      const r = await get(kube, kind, route);
      let found = false;
      for (const p of r?.status?.parents ?? []) {
        const stale = staleConditions(r!, p.conditions);
        if (stale) return { ok: false, seen: stale };
        const ns = p.parentRef?.namespace;
        if (p.parentRef?.name === gw.name && (ns === undefined || ns === gw.namespace))
          found ||= findCondition(p.conditions, c.type, c.status ?? '', c.reason ?? '');
      }
      return { ok: found, seen: r?.status?.parents };
    },
  );
}

/**
 * HTTPRouteMustHaveNoAcceptedParents (TLSRouteMustHaveNoAcceptedParents for kind TLSRoute): no parents (seen twice,
 * 1 s apart) or one with Accepted=False.
 */
export async function httpRouteMustHaveNoAcceptedParents(
  kube: Kube,
  tc: TimeoutConfig,
  route: NN,
  kind: 'HTTPRoute' | 'TLSRoute' = 'HTTPRoute',
): Promise<void> {
  let emptyChecked = false;
  await waitFor(
    `${kind} ${route.namespace}/${route.name} to have no accepted parents`,
    async () => {
      const r = await get(kube, kind, route);
      const parents: any[] = r?.status?.parents ?? [];
      if (!parents.length) {
        if (!emptyChecked) {
          emptyChecked = true;
          return { ok: false };
        }
        return { ok: true };
      }
      if (parents.length > 1) return { ok: false, seen: parents };
      if (staleConditions(r!, parents[0].conditions)) return { ok: false, seen: parents };
      return { ok: conditionsMatch([{ type: 'Accepted', status: 'False' }], parents[0].conditions), seen: parents };
    },
    { timeoutMs: tc.httpRouteMustNotHaveParents, intervalMs: 1000 },
  );
}

/**
 * An object's status.conditions to have `c`, every condition of its latest generation first: upstream's
 * GatewayMustHaveCondition and ListenerSetMustHaveCondition, which differ only in kind and timeout.
 */
async function objectMustHaveCondition(
  kube: Kube,
  kind: string,
  nn: NN,
  c: Cond,
  timeoutMs: number,
  tc: TimeoutConfig,
) {
  await poll(`${kind} ${nn.namespace}/${nn.name} to have ${JSON.stringify(c)}`, tc, timeoutMs, async () => {
    const o = await get(kube, kind, nn);
    if (!o) return { ok: false, seen: 'not found' };
    const stale = staleConditions(o, o.status?.conditions);
    if (stale) return { ok: false, seen: stale };
    return {
      ok: findCondition(o.status?.conditions, c.type, c.status ?? '', c.reason ?? ''),
      seen: o.status?.conditions,
    };
  });
}

/** GatewayMustHaveCondition (latest generation first). */
export async function gatewayMustHaveCondition(kube: Kube, tc: TimeoutConfig, gw: NN, c: Cond): Promise<void> {
  await objectMustHaveCondition(kube, 'Gateway', gw, c, tc.gatewayMustHaveCondition, tc);
}

export interface ListenerStatus {
  name: string;
  supportedKinds: { group?: string; kind: string }[];
  attachedRoutes: number;
  conditions: Cond[];
}

function listenersMatch(expected: ListenerStatus[], actual: any[] | undefined): boolean {
  if (expected.length !== (actual ?? []).length) return false;
  return expected.every((e) => {
    const a = actual!.find((x) => x.name === e.name);
    if (!a) return false;
    if (!e.supportedKinds.length && (a.supportedKinds ?? []).length) return false;
    const kinds: any[] = a.supportedKinds ?? [];
    const allFound = e.supportedKinds.every((k) =>
      kinds.some((ak) => (ak.group ?? GROUP) === (k.group ?? GROUP) && ak.kind === k.kind),
    );
    return allFound && a.attachedRoutes === e.attachedRoutes && conditionsMatch(e.conditions, a.conditions);
  });
}

/** A Gateway's or ListenerSet's status.listeners as expected, its conditions of the latest generation first. */
async function objectMustHaveListeners(
  kube: Kube,
  kind: string,
  nn: NN,
  listeners: ListenerStatus[],
  timeoutMs: number,
  tc: TimeoutConfig,
) {
  await poll(
    `${kind} ${nn.namespace}/${nn.name} status to have listeners ${JSON.stringify(listeners)}`,
    tc,
    timeoutMs,
    async () => {
      const o = await get(kube, kind, nn);
      if (!o) return { ok: false, seen: 'not found' };
      const stale = staleConditions(o, o.status?.conditions);
      if (stale) return { ok: false, seen: stale };
      return { ok: listenersMatch(listeners, o.status?.listeners), seen: o.status?.listeners };
    },
  );
}

/** GatewayStatusMustHaveListeners. */
export async function gatewayStatusMustHaveListeners(
  kube: Kube,
  tc: TimeoutConfig,
  gw: NN,
  listeners: ListenerStatus[],
): Promise<void> {
  await objectMustHaveListeners(kube, 'Gateway', gw, listeners, tc.gatewayStatusMustHaveListeners, tc);
}

/** The *MustHaveLatestConditions waits: every condition carries the object's generation. */
export async function mustHaveLatestConditions(
  kube: Kube,
  tc: TimeoutConfig,
  kind: string,
  nn: NN | string,
): Promise<void> {
  const what = typeof nn === 'string' ? nn : `${nn.namespace}/${nn.name}`;
  await poll(`${kind} ${what} to have Latest ObservedGeneration set`, tc, tc.latestObservedGenerationSet, async () => {
    const o = await get(kube, kind, nn);
    if (!o) return { ok: false, seen: 'not found' };
    const lists =
      kind === 'HTTPRoute'
        ? (o.status?.parents ?? []).map((p: any) => p.conditions)
        : kind === 'BackendTLSPolicy'
          ? (o.status?.ancestors ?? []).map((a: any) => a.conditions)
          : [o.status?.conditions];
    for (const l of lists) {
      const stale = staleConditions(o, l);
      if (stale) return { ok: false, seen: stale };
    }
    return { ok: true };
  });
}

/**
 * BackendTLSPolicyMustHaveCondition: an ancestor naming the Gateway has the condition, every ancestor's conditions at
 * the policy's generation (HTTPRouteMustHaveCondition's timeout, as upstream).
 */
export async function backendTLSPolicyMustHaveCondition(
  kube: Kube,
  tc: TimeoutConfig,
  policy: NN,
  gw: NN,
  c: Cond,
): Promise<void> {
  await poll(
    `BackendTLSPolicy ${policy.namespace}/${policy.name} to have ${JSON.stringify(c)} for ${gw.namespace}/${gw.name}`,
    tc,
    tc.httpRouteMustHaveCondition,
    async () => {
      const p = await get(kube, 'BackendTLSPolicy', policy);
      let found = false;
      for (const a of p?.status?.ancestors ?? []) {
        const stale = staleConditions(p!, a.conditions);
        if (stale) return { ok: false, seen: stale };
        const ns = a.ancestorRef?.namespace;
        if (a.ancestorRef?.name === gw.name && (ns === undefined || ns === gw.namespace))
          found ||= findCondition(a.conditions, c.type, c.status ?? '', c.reason ?? '');
      }
      return { ok: found, seen: p?.status?.ancestors };
    },
  );
}

/** HTTPRouteMustHaveResolvedRefsConditionsTrue. */
export const httpRouteMustHaveResolvedRefsConditionsTrue = (kube: Kube, tc: TimeoutConfig, route: NN, gw: NN) =>
  httpRouteMustHaveCondition(kube, tc, route, gw, { type: 'ResolvedRefs', status: 'True', reason: 'ResolvedRefs' });

/** HTTPRouteMustHaveRouteAcceptedConditionsTrue. */
export const httpRouteMustHaveRouteAcceptedConditionsTrue = (kube: Kube, tc: TimeoutConfig, route: NN, gw: NN) =>
  httpRouteMustHaveCondition(kube, tc, route, gw, { type: 'Accepted', status: 'True', reason: 'Accepted' });

/** HTTPRouteMustHaveResolvedRefsMustHaveBackendsNotFound. */
export const httpRouteMustHaveResolvedRefsBackendNotFound = (kube: Kube, tc: TimeoutConfig, route: NN, gw: NN) =>
  httpRouteMustHaveCondition(kube, tc, route, gw, { type: 'ResolvedRefs', status: 'False', reason: 'BackendNotFound' });

/** GatewayMustHaveZeroRoutes: no listener, or exactly one with no attached route (latest generation). */
export async function gatewayMustHaveZeroRoutes(kube: Kube, tc: TimeoutConfig, gw: NN): Promise<void> {
  await poll(
    `Gateway ${gw.namespace}/${gw.name} to have zero routes`,
    tc,
    tc.gatewayStatusMustHaveListeners,
    async () => {
      const g = await get(kube, 'Gateway', gw);
      if (!g) return { ok: false, seen: 'not found' };
      if (staleConditions(g, g.status?.conditions)) return { ok: false, seen: g.status };
      const ls: any[] = g.status?.listeners ?? [];
      return { ok: ls.length === 0 || (ls.length === 1 && ls[0].attachedRoutes === 0), seen: g.status };
    },
  );
}

/** A JSON merge patch of an object (upstream's client.Patch with client.MergeFrom): `patch` holds the changed fields. */
export async function mergePatch(kube: Kube, obj: KObj, patch: Record<string, unknown>): Promise<KObj> {
  const body = {
    apiVersion: obj.apiVersion,
    kind: obj.kind,
    metadata: { name: obj.metadata?.name, namespace: obj.metadata?.namespace },
    ...patch,
  };
  return (await kube.objects.patch(
    body as KObj,
    undefined,
    undefined,
    undefined,
    undefined,
    PatchStrategy.MergePatch,
  )) as KObj;
}

/** GatewayMustHaveAttachedListeners: status.attachedListenerSets (absent reads 0) is `count` (latest generation). */
export async function gatewayMustHaveAttachedListeners(
  kube: Kube,
  tc: TimeoutConfig,
  gw: NN,
  count: number,
): Promise<void> {
  await poll(
    `Gateway ${gw.namespace}/${gw.name} to have ${count} attached ListenerSets`,
    tc,
    tc.gatewayStatusMustHaveListeners,
    async () => {
      const g = await get(kube, 'Gateway', gw);
      if (!g) return { ok: false, seen: 'not found' };
      const stale = staleConditions(g, g.status?.conditions);
      if (stale) return { ok: false, seen: stale };
      return { ok: (g.status?.attachedListenerSets ?? 0) === count, seen: g.status };
    },
  );
}

/** ListenerSetMustHaveCondition (latest generation first). */
export async function listenerSetMustHaveCondition(kube: Kube, tc: TimeoutConfig, ls: NN, c: Cond): Promise<void> {
  await objectMustHaveCondition(kube, 'ListenerSet', ls, c, tc.listenerSetMustHaveCondition, tc);
}

/** ListenerSetStatusMustHaveListeners: the set's status.listeners as expected (upstream's listenerSetListenersMatch). */
export async function listenerSetStatusMustHaveListeners(
  kube: Kube,
  tc: TimeoutConfig,
  ls: NN,
  listeners: ListenerStatus[],
): Promise<void> {
  await objectMustHaveListeners(kube, 'ListenerSet', ls, listeners, tc.listenerSetListenersMustHaveConditions, tc);
}

/** generateAcceptedListenerConditions (tests/listenerset-allowed-namespace-same.go): any reason. */
export const acceptedListenerConditions = (): Cond[] => [
  { type: 'ResolvedRefs', status: 'True' },
  { type: 'Accepted', status: 'True' },
  { type: 'Programmed', status: 'True' },
];

/** generateSupportedRouteKinds (tests/listenerset-http-routing.go). */
export const httpRouteKinds = () => [{ group: GROUP, kind: 'HTTPRoute' }];
