// lab:status: what a user checks first when something does not route: the cluster, the control plane, the Gateways
// with their addresses, every condition of the Gateway API and policy resources, and each connected proxy's xDS
// ACK/NACK state, and Gateway API objects of kinds the control plane does not read that attach to its Gateways
// (status-unread.ts). Read-only: list/get on the Kubernetes API and a GET of /snapshots/xds through a port-forward.
// A section that cannot be read says why, and the others still print.
import { VersionApi } from '@kubernetes/client-node';
import type { LabRecord } from '../state.ts';
import { CONTROL_PLANE, selectorString } from '../toolkit/admin.ts';
import type { KObj, Kube } from '../toolkit/kube.ts';
import { isPodReady } from '../toolkit/portforward.ts';
import { CONTROLLER_NAME, GW_API, listProxyPods, type ProxyPod, VENDOR_API, withControlPlaneAdmin } from './proxies.ts';
import {
  type ConditionRow,
  conditionRows,
  describeProxy,
  describeRow,
  type ProxyRow,
  proxyRows,
} from './status-rows.ts';
import { readUnread, unreadWarnings } from './status-unread.ts';

export interface PodSummary {
  name: string;
  /** kubectl's STATUS column: a waiting reason (CrashLoopBackOff, ...) or the phase. */
  state: string;
  ready: boolean;
  restarts: number;
}

export interface GatewaySummary {
  namespace: string;
  name: string;
  class: string;
  /** status.addresses, or the Service's load balancer ingress when the status has none. */
  addresses: string[];
  /** `<name>:<port>/<protocol>`, with the lab's load balancer fallback port when it had to use one. */
  listeners: string[];
  proxyPods: PodSummary[];
  proxiesReady: number;
}

export interface StatusReport {
  /** The namespace shown, or undefined for all namespaces. */
  namespace?: string;
  cluster: {
    server: string;
    context: string;
    version?: string;
    lab?: { name: string; backend: string; pid?: number; running?: boolean };
    nodes: { name: string; ready: boolean; reason?: string }[];
    error?: string;
  };
  controlPlane: {
    namespace: string;
    deployment: string;
    found: boolean;
    ready: number;
    desired: number;
    validation?: string;
    image?: string;
    pods: PodSummary[];
    error?: string;
  };
  gateways: GatewaySummary[];
  conditions: ConditionRow[];
  proxies: {
    /** Whether /snapshots/xds was read. */
    reachable: boolean;
    /** Why there is no proxy data (the control plane's own reason, or the failure reaching it). */
    reason?: string;
    rows: ProxyRow[];
  };
  /** Errors reading a section (the rest of the report still stands). */
  errors: string[];
  /** What makes the exit code non-zero. */
  problems: string[];
  warnings: string[];
  elapsedMs: number;
}

export interface StatusTarget {
  kube: Kube;
  context?: string;
  rec?: LabRecord;
}

export interface StatusOptions {
  /** One namespace; undefined for all. */
  namespace?: string;
  /** Adds listener conditions that are ok (messages are always in the data; the renderer shows them with -v). */
  verbose?: boolean;
}

type Settled<T> = { ok: true; value: T } | { ok: false; error: string };

function reason(err: unknown): string {
  const e = err as { code?: number; body?: unknown; message?: string };
  if (e?.code === 404) return 'not found on the API server (are the CRDs installed? npm run lab:up installs them)';
  if (e?.code === 403) return `forbidden: ${typeof e.body === 'string' ? e.body.slice(0, 200) : 'check your RBAC'}`;
  return (e?.message ?? String(err)).split('\n')[0];
}

async function settle<T>(p: Promise<T>): Promise<Settled<T>> {
  try {
    return { ok: true, value: await p };
  } catch (err) {
    return { ok: false, error: reason(err) };
  }
}

export function podSummary(p: KObj): PodSummary {
  const statuses: any[] = p.status?.containerStatuses ?? [];
  const waiting = statuses.find((c) => c.state?.waiting?.reason)?.state.waiting.reason;
  const terminated = statuses.find((c) => c.state?.terminated?.reason)?.state.terminated.reason;
  return {
    name: p.metadata?.name ?? '',
    state: p.metadata?.deletionTimestamp ? 'Terminating' : (waiting ?? terminated ?? p.status?.phase ?? 'Unknown'),
    ready: isPodReady(p as never),
    restarts: statuses.reduce((n, c) => n + (c.restartCount ?? 0), 0),
  };
}

function lbAddresses(svc: KObj | undefined): string[] {
  return (svc?.status?.loadBalancer?.ingress ?? []).map((i: any) => i.ip ?? i.hostname).filter(Boolean);
}

export function gatewaySummary(g: KObj, svc: KObj | undefined, pods: ProxyPod[]): GatewaySummary {
  const fromStatus = (g.status?.addresses ?? []).map((a: any) => a.value).filter(Boolean);
  const fallback = (p: number) => svc?.metadata?.annotations?.[`gwlab.dev/lb-port-${p}`];
  const mine = pods.filter((p) => p.gateway.namespace === g.metadata?.namespace && p.gateway.name === g.metadata?.name);
  const proxyPods = mine.map((p) => podSummary(p.object));
  return {
    namespace: g.metadata?.namespace ?? '',
    name: g.metadata?.name ?? '',
    class: g.spec?.gatewayClassName ?? '',
    addresses: fromStatus.length ? fromStatus : lbAddresses(svc),
    listeners: (g.spec?.listeners ?? []).map(
      (l: any) => `${l.name}:${l.port}/${l.protocol}${fallback(l.port) ? ` (LB port ${fallback(l.port)})` : ''}`,
    ),
    proxyPods,
    proxiesReady: proxyPods.filter((p) => p.ready).length,
  };
}

async function clusterSection(t: StatusTarget): Promise<StatusReport['cluster']> {
  const kc = t.kube.kc;
  const out: StatusReport['cluster'] = {
    server: kc.getCurrentCluster()?.server ?? '',
    context: t.context ?? kc.getCurrentContext(),
    nodes: [],
  };
  if (t.rec) {
    let running: boolean | undefined;
    if (t.rec.pid) {
      try {
        process.kill(t.rec.pid, 0);
        running = true;
      } catch {
        running = false;
      }
    }
    out.lab = { name: t.rec.name, backend: t.rec.backend, ...(t.rec.pid ? { pid: t.rec.pid, running } : {}) };
  }
  const [version, nodes] = await Promise.all([
    settle(kc.makeApiClient(VersionApi).getCode()),
    settle(t.kube.list('v1', 'Node')),
  ]);
  if (version.ok) out.version = version.value.gitVersion;
  else out.error = `cannot reach the API server at ${out.server}: ${version.error}`;
  if (nodes.ok) {
    out.nodes = nodes.value.map((n) => {
      const c = (n.status?.conditions ?? []).find((x: any) => x.type === 'Ready');
      return {
        name: n.metadata?.name ?? '',
        ready: c?.status === 'True',
        ...(c?.status !== 'True' ? { reason: c?.reason ?? 'no Ready condition' } : {}),
      };
    });
  } else if (version.ok) out.error = `cannot list nodes: ${nodes.error}`;
  return out;
}

function controlPlaneNotRead(): StatusReport['controlPlane'] {
  return {
    namespace: CONTROL_PLANE.namespace,
    deployment: CONTROL_PLANE.deployment,
    found: false,
    ready: 0,
    desired: 0,
    pods: [],
  };
}

async function controlPlaneSection(kube: Kube): Promise<StatusReport['controlPlane']> {
  const out = controlPlaneNotRead();
  const d = await settle(kube.get('apps/v1', 'Deployment', CONTROL_PLANE.deployment, CONTROL_PLANE.namespace));
  if (!d.ok) return { ...out, error: d.error };
  if (!d.value) return out;
  const dep = d.value;
  const c = dep.spec?.template?.spec?.containers?.[0];
  const env = (c?.env ?? []).find((e: any) => e.name === 'GWVENDOR_XDS_VALIDATION');
  const pods = await settle(kube.list('v1', 'Pod', CONTROL_PLANE.namespace, selectorString(dep.spec?.selector)));
  return {
    ...out,
    found: true,
    ready: dep.status?.readyReplicas ?? 0,
    desired: dep.spec?.replicas ?? 1,
    // The control plane's default when the variable is unset.
    validation: env?.value ?? (env ? '(from a reference)' : 'strict'),
    image: c?.image,
    pods: pods.ok ? pods.value.map(podSummary).sort((a, b) => a.name.localeCompare(b.name)) : [],
    ...(pods.ok ? {} : { error: `cannot list its pods: ${pods.error}` }),
  };
}

/** The report without the API server: every other section would fail with the same error, so none is read. */
function unreachableReport(cluster: StatusReport['cluster'], ns: string | undefined): Omit<StatusReport, 'elapsedMs'> {
  return {
    ...(ns ? { namespace: ns } : {}),
    cluster,
    controlPlane: { ...controlPlaneNotRead(), error: 'not read: the API server is unreachable' },
    gateways: [],
    conditions: [],
    proxies: { reachable: false, reason: 'not read: the API server is unreachable', rows: [] },
    errors: [],
    problems: [`${cluster.error} (is the lab up? npm run lab:up; or check --kubeconfig/--context)`],
    warnings: [],
  };
}

type XdsSnapshots = { data?: Record<string, any>; reason?: string };

/** The objects lab:status judges, read in parallel; a list that cannot be read is empty, with its error. */
async function readObjects(kube: Kube, ns: string | undefined) {
  const list = (apiVersion: string, kind: string) => settle(kube.list(apiVersion, kind, ns));
  // Kinds a cluster may not serve yet (Gateway API v1.6.1's GRPCRoute, TCPRoute, UDPRoute, TLSRoute, ListenerSet): none,
  // not an error.
  const optional = (kind: string) =>
    settle(kube.list(GW_API, kind, ns).catch((e) => (kindMissing(e) ? [] : Promise.reject(e))));
  const l4 = Promise.all([
    optional('ListenerSet'),
    optional('TCPRoute'),
    optional('UDPRoute'),
    optional('TLSRoute'),
    optional('GRPCRoute'),
  ]);
  const [controlPlane, classes, gateways, routes, policies, extensions, services, pods, xds, unread] =
    await Promise.all([
      controlPlaneSection(kube),
      settle(kube.list(GW_API, 'GatewayClass')),
      list(GW_API, 'Gateway'),
      list(GW_API, 'HTTPRoute'),
      list(VENDOR_API, 'TrafficPolicy'),
      list(VENDOR_API, 'GatewayExtension'),
      list('v1', 'Service'),
      settle(listProxyPods(kube, ns ? [ns] : undefined)),
      settle(withControlPlaneAdmin(kube, (a) => a.json<XdsSnapshots>('/snapshots/xds'))),
      readUnread(kube, ns),
    ]);
  const [listenerSets, tcpRoutes, udpRoutes, tlsRoutes, grpcRoutes] = await l4;
  const backendConfig = await settle(
    kube.list(VENDOR_API, 'BackendConfigPolicy', ns).catch((e) => (kindMissing(e) ? [] : Promise.reject(e))),
  );
  // A cluster installed before ListenerPolicy existed has no CRD for it: none, not an error.
  const listenerPolicies = await settle(
    kube.list(VENDOR_API, 'ListenerPolicy', ns).catch((e) => (kindMissing(e) ? [] : Promise.reject(e))),
  );
  const errors: string[] = [];
  const got = <T>(what: string, s: Settled<T[]>): T[] => {
    if (s.ok) return s.value;
    errors.push(`cannot list ${what}: ${s.error}`);
    return [];
  };
  const gws = got('Gateways', gateways);
  // Scoped to a namespace, the classes shown are those its Gateways use: another team's class is not its problem.
  const usedClasses = new Set(gws.map((g) => g.spec?.gatewayClassName));
  return {
    controlPlane,
    xds,
    gateways: gws,
    classes: got('GatewayClasses', classes).filter((c) => !ns || usedClasses.has(c.metadata?.name)),
    services: got('Services', services),
    proxyPods: got('proxy pods', pods),
    httpRoutes: got('HTTPRoutes', routes),
    grpcRoutes: got('GRPCRoutes', grpcRoutes),
    listenerSets: got('ListenerSets', listenerSets),
    tcpRoutes: got('TCPRoutes', tcpRoutes),
    udpRoutes: got('UDPRoutes', udpRoutes),
    tlsRoutes: got('TLSRoutes', tlsRoutes),
    trafficPolicies: got('TrafficPolicies', policies),
    backendConfigPolicies: got('BackendConfigPolicies', backendConfig),
    listenerPolicies: got('ListenerPolicies', listenerPolicies),
    gatewayExtensions: got('GatewayExtensions', extensions),
    unread,
    errors,
  };
}

function gatewaySummaries(gateways: KObj[], services: KObj[], proxyPods: ProxyPod[]): GatewaySummary[] {
  return [...gateways]
    .sort(
      (a, b) =>
        (a.metadata?.namespace ?? '').localeCompare(b.metadata?.namespace ?? '') ||
        (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''),
    )
    .map((g) =>
      gatewaySummary(
        g,
        services.find((s) => s.metadata?.namespace === g.metadata?.namespace && s.metadata?.name === g.metadata?.name),
        proxyPods,
      ),
    );
}

function proxiesSection(xds: Settled<XdsSnapshots>, ns: string | undefined): StatusReport['proxies'] {
  return xds.ok
    ? {
        reachable: true,
        ...(xds.value.reason ? { reason: xds.value.reason } : {}),
        rows: proxyRows(xds.value.data ?? {}, { namespace: ns }),
      }
    : { reachable: false, reason: xds.error, rows: [] };
}

/** Everything lab:status shows, read in parallel. */
export async function collectStatus(t: StatusTarget, opts: StatusOptions = {}): Promise<StatusReport> {
  const t0 = performance.now();
  const ns = opts.namespace;
  const cluster = await clusterSection(t);
  if (cluster.error && !cluster.version) {
    return { ...unreachableReport(cluster, ns), elapsedMs: Math.round(performance.now() - t0) };
  }
  const o = await readObjects(t.kube, ns);
  const report = {
    ...(ns ? { namespace: ns } : {}),
    cluster,
    controlPlane: o.controlPlane,
    gateways: gatewaySummaries(o.gateways, o.services, o.proxyPods),
    conditions: conditionRows(
      {
        gatewayClasses: o.classes,
        gateways: o.gateways,
        httpRoutes: o.httpRoutes,
        grpcRoutes: o.grpcRoutes,
        listenerSets: o.listenerSets,
        tcpRoutes: o.tcpRoutes,
        udpRoutes: o.udpRoutes,
        tlsRoutes: o.tlsRoutes,
        trafficPolicies: o.trafficPolicies,
        backendConfigPolicies: o.backendConfigPolicies,
        listenerPolicies: o.listenerPolicies,
        gatewayExtensions: o.gatewayExtensions,
      },
      { verbose: opts.verbose },
    ),
    proxies: proxiesSection(o.xds, ns),
    errors: o.errors,
  };
  return { ...report, ...judge(report, o.classes, o.unread), elapsedMs: Math.round(performance.now() - t0) };
}

/**
 * What makes lab:status exit non-zero (problems) and what it only warns about, from the sections read: the cluster,
 * the control plane, the read errors, the condition and proxy rows (status-rows.ts judged those), and each Gateway of
 * one of our classes: its proxy pods ready and connected.
 */
function judge(
  r: Omit<StatusReport, 'problems' | 'warnings' | 'elapsedMs'>,
  classes: KObj[],
  unread: KObj[],
): { problems: string[]; warnings: string[] } {
  const { cluster, controlPlane, proxies } = r;
  const problems: string[] = [];
  const warnings: string[] = [];
  if (cluster.error) problems.push(cluster.error);
  for (const n of cluster.nodes) if (!n.ready) problems.push(`node ${n.name} is not Ready (${n.reason})`);
  if (cluster.lab?.running === false) problems.push(`the lab process (pid ${cluster.lab.pid}) is not running`);
  if (controlPlane.error && !controlPlane.found) problems.push(`control plane: ${controlPlane.error}`);
  else if (!controlPlane.found) {
    problems.push(
      `control plane Deployment ${CONTROL_PLANE.namespace}/${CONTROL_PLANE.deployment} not found: is the system installed? (npm run lab:up)`,
    );
  } else if (controlPlane.ready < controlPlane.desired) {
    problems.push(
      `control plane ${controlPlane.ready}/${controlPlane.desired} ready: kubectl -n ${CONTROL_PLANE.namespace} describe deploy/${CONTROL_PLANE.deployment}`,
    );
  }
  if (!proxies.reachable) problems.push(`control plane admin (/snapshots/xds) not reachable: ${proxies.reason}`);
  problems.push(...r.errors);
  for (const row of r.conditions) {
    if (row.health === 'problem') problems.push(describeRow(row));
    else if (row.health === 'warning') warnings.push(describeRow(row));
  }
  for (const row of proxies.rows) {
    if (row.health === 'problem') problems.push(describeProxy(row));
    else if (row.health === 'warning') warnings.push(describeProxy(row));
  }
  warnings.push(...gatewayWarnings(r.gateways, classes, proxies));
  warnings.push(...unreadWarnings(unread, r.gateways, ourClasses(classes)));
  for (const p of controlPlane.pods) if (!p.ready) warnings.push(`control plane pod ${p.name}: ${p.state}`);
  return { problems, warnings };
}

/** The names of the GatewayClasses our controller handles. */
function ourClasses(classes: KObj[]): Set<string> {
  return new Set(
    classes.filter((c) => c.spec?.controllerName === CONTROLLER_NAME).map((c) => c.metadata?.name as string),
  );
}

/** A Gateway of one of our classes whose proxy pods are not all ready, or none of which is connected. */
function gatewayWarnings(gateways: GatewaySummary[], classes: KObj[], proxies: StatusReport['proxies']): string[] {
  const warnings: string[] = [];
  const classOk = ourClasses(classes);
  const connected = new Set(proxies.rows.map((row) => row.gateway));
  for (const g of gateways) {
    if (!classOk.has(g.class)) continue;
    const key = `${g.namespace}/${g.name}`;
    if (g.proxiesReady < g.proxyPods.length || !g.proxyPods.length) {
      const notReady = g.proxyPods.filter((p) => !p.ready).map((p) => `${p.name} ${p.state}`);
      warnings.push(
        `Gateway ${key}: ${g.proxiesReady}/${g.proxyPods.length} proxy pods ready${notReady.length ? ` (${notReady.join(', ')})` : ''}: kubectl -n ${g.namespace} describe pods -l gateway.networking.k8s.io/gateway-name=${g.name}`,
      );
    }
    if (proxies.reachable && !connected.has(key)) {
      warnings.push(`Gateway ${key}: no proxy of it is connected to the control plane`);
    }
  }
  return warnings;
}

/** The API server does not serve the kind (no CRD): a 404, or client-node's discovery not listing it. */
function kindMissing(err: unknown): boolean {
  const e = err as { code?: unknown; statusCode?: unknown; message?: string };
  return e?.code === 404 || e?.statusCode === 404 || /Unrecognized API version and kind/.test(e?.message ?? '');
}
