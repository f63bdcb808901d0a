// The control plane's declarative state, and the one place its stages meet: an input collection per watched kind
// (kube/watched.ts; fed by informers, or by YAML in tests and the translate tool) and the collections derived from
// them by the stages (ir/, xds/translator/, status/build.ts), in order: deriveResources → deriveGateways →
// deriveSnapshots → deriveStatuses:
//   HTTPRoutes, GRPCRoutes → Routes ┐
//   TrafficPolicies → Policies ─────┼→ Gateways (IR + reports) → Xds (Listeners, Routes, Clusters) ─┐
//   GatewayExtensions → Extensions ─┘        │                    ServiceEndpoints → Endpoints ──────┴→ Snapshots
//                                            └→ GatewayStatuses, RouteStatuses, PolicyStatuses, ...
// Each derived item records what it read, so an HTTPRoute edit recomputes that route, the Gateways it names and their
// snapshots, and nothing else.

import { redactSecrets } from '../shared/envoy/redact.ts';
import { deriveBackendConfigInfos, deriveBackendConfigStatuses } from './backend-config-stages.ts';
import { deriveBackendTlsInfos, deriveBackendTlsStatuses } from './backend-tls-stages.ts';
import type { BackendConfigInfo } from './ir/backend-config-policy.ts';
import type { RouteWorld } from './ir/backend-refs.ts';
import type { BackendTlsInfo } from './ir/backend-tls.ts';
import { buildServiceEndpoints, SERVICE_NAME_LABEL, type ServiceEndpoints } from './ir/endpoints.ts';
import { buildExtensionInfo, type ExtensionInfo } from './ir/extensions.ts';
import { buildGateway, type GatewayResult, type GatewayWorld, isOurGateway } from './ir/gateway.ts';
import { buildGrpcRouteInfo } from './ir/grpc-routes.ts';
import { buildL4RouteInfo, type L4Kind, type L4RouteInfo } from './ir/l4-routes.ts';
import type { ListenerPolicyInfo } from './ir/listener-policy.ts';
import { buildPolicyInfo, type PolicyInfo, policyTargetKeys } from './ir/policies.ts';
import { buildRouteInfo, type RouteInfo, routeGatewayKeys } from './ir/routes.ts';
import type { ClusterIR, EndpointAddress, ValidationMode } from './ir/types.ts';
import { type Collection, type Ctx, derive, fetchDerived, InputCollection, Runtime } from './krt/collection.ts';
import { krtView } from './krt-view.ts';
import { WATCHED, type WatchedKindName } from './kube/watched.ts';
import { deriveListenerPolicyInfos, deriveListenerPolicyStatuses } from './listener-policy-stages.ts';
import {
  type BackendTLSPolicy,
  CONTROLLER_NAME,
  type ConfigMap,
  type Deployment,
  type EndpointSlice,
  GATEWAY_GROUP,
  type Gateway,
  type GatewayClass,
  type GatewayExtension,
  type GatewayParameters,
  type GRPCRoute,
  type HTTPRoute,
  keyOf,
  type L4Route,
  type ListenerPolicy,
  type ListenerSet,
  type Namespace,
  type ReferenceGrant,
  type Secret,
  type Service,
  type TrafficPolicy,
} from './model.ts';
import {
  extensionStatus,
  gatewayClassStatus,
  gatewayStatus,
  listenerSetStatus,
  policyStatus,
  type Rejection,
  routeParents,
  type StatusCondition,
  type StatusUpdate,
} from './status/build.ts';
import { translateEndpoints } from './xds/translator/cluster.ts';
import type { Json } from './xds/translator/envoy.ts';
import { translateGateway, type XdsResources } from './xds/translator/gateway.ts';

/** The resources of one Gateway's snapshot, in canonical proto JSON, keyed by proxy role. */
export interface SnapshotResources {
  gateway: string;
  role: string;
  listeners: Json[];
  routes: Json[];
  clusters: Json[];
  endpoints: Json[];
}

/** A proxy's rejection attributed to one resource (`<Kind>/<ns>/<name>`). */
export interface RejectionRecord {
  key: string;
  rejections: Rejection[];
}

export interface PipelineOptions {
  mode: ValidationMode;
  controllerName?: string;
  runtime?: Runtime;
  /** Told how long each Gateway translation stage took (metrics). */
  observe?: (stage: 'gateway' | 'xds', seconds: number) => void;
}

export class Pipeline {
  readonly rt: Runtime;
  readonly mode: ValidationMode;
  readonly controllerName: string;

  /** The input collection of each watched kind, in the table's order. */
  private readonly inputs = new Map<string, InputCollection<any>>();
  readonly gatewayClasses: InputCollection<GatewayClass>;
  readonly gatewaysIn: InputCollection<Gateway>;
  readonly httpRoutes: InputCollection<HTTPRoute>;
  readonly grpcRoutes: InputCollection<GRPCRoute>;
  readonly tcpRoutes: InputCollection<L4Route>;
  readonly udpRoutes: InputCollection<L4Route>;
  readonly tlsRoutes: InputCollection<L4Route>;
  readonly listenerSets: InputCollection<ListenerSet>;
  readonly referenceGrants: InputCollection<ReferenceGrant>;
  readonly namespaces: InputCollection<Namespace>;
  readonly services: InputCollection<Service>;
  readonly secrets: InputCollection<Secret>;
  readonly endpointSlices: InputCollection<EndpointSlice>;
  readonly deployments: InputCollection<Deployment>;
  readonly gatewayParameters: InputCollection<GatewayParameters>;
  readonly trafficPolicies: InputCollection<TrafficPolicy>;
  readonly gatewayExtensions: InputCollection<GatewayExtension>;
  readonly listenerPoliciesIn: InputCollection<ListenerPolicy>;
  readonly backendTlsPoliciesIn: InputCollection<BackendTLSPolicy>;
  readonly configMaps: InputCollection<ConfigMap>;
  readonly rejections: InputCollection<RejectionRecord>;

  readonly routes: Collection<RouteInfo>;
  readonly grpcRouteInfos: Collection<RouteInfo>;
  readonly tcpRouteInfos: Collection<L4RouteInfo>;
  readonly udpRouteInfos: Collection<L4RouteInfo>;
  readonly tlsRouteInfos: Collection<L4RouteInfo>;
  readonly extensions: Collection<ExtensionInfo>;
  readonly policies: Collection<PolicyInfo>;
  readonly listenerPolicies: Collection<ListenerPolicyInfo>;
  readonly backendTlsPolicies: Collection<BackendTlsInfo>;
  readonly backendConfigPolicies: Collection<BackendConfigInfo>;
  readonly serviceEndpoints: Collection<ServiceEndpoints>;
  readonly gateways: Collection<GatewayResult>;
  readonly xds: Collection<XdsResources & { gateway: string; role: string }>;
  readonly endpoints: Collection<{ gateway: string; endpoints: Json[] }>;
  readonly snapshots: Collection<SnapshotResources>;
  /** Every status collection, in the order the writer takes them (statusCollections). */
  readonly statuses: ReturnType<typeof deriveStatuses>;

  constructor(opts: PipelineOptions) {
    this.rt = opts.runtime ?? new Runtime();
    const rt = this.rt;
    this.mode = opts.mode;
    this.controllerName = opts.controllerName ?? CONTROLLER_NAME;
    const controllerName = this.controllerName;
    const mode = opts.mode;
    // One input collection per watched kind (kube/watched.ts); GatewayParameters are shown redacted.
    for (const w of WATCHED) {
      this.inputs.set(w.kind, new InputCollection<any>(rt, w.collection, keyOf, krtView(w.kind)));
    }
    const input = <T>(kind: WatchedKindName) => this.inputs.get(kind) as InputCollection<T>;
    this.gatewayClasses = input<GatewayClass>('GatewayClass');
    this.gatewaysIn = input<Gateway>('Gateway');
    this.httpRoutes = input<HTTPRoute>('HTTPRoute');
    this.grpcRoutes = input<GRPCRoute>('GRPCRoute');
    this.tcpRoutes = input<L4Route>('TCPRoute');
    this.udpRoutes = input<L4Route>('UDPRoute');
    this.tlsRoutes = input<L4Route>('TLSRoute');
    this.listenerSets = input<ListenerSet>('ListenerSet');
    this.referenceGrants = input<ReferenceGrant>('ReferenceGrant');
    this.namespaces = input<Namespace>('Namespace');
    this.services = input<Service>('Service');
    this.secrets = input<Secret>('Secret');
    this.endpointSlices = input<EndpointSlice>('EndpointSlice');
    this.deployments = input<Deployment>('Deployment');
    this.gatewayParameters = input<GatewayParameters>('GatewayParameters');
    this.trafficPolicies = input<TrafficPolicy>('TrafficPolicy');
    this.gatewayExtensions = input<GatewayExtension>('GatewayExtension');
    this.listenerPoliciesIn = input<ListenerPolicy>('ListenerPolicy');
    this.backendTlsPoliciesIn = input<BackendTLSPolicy>('BackendTLSPolicy');
    this.configMaps = input<ConfigMap>('ConfigMap');
    this.rejections = new InputCollection<RejectionRecord>(rt, 'ProxyRejections', (r) => r.key);

    const resources = deriveResources(this, mode);
    this.routes = resources.routes;
    this.grpcRouteInfos = resources.grpcRoutes;
    this.tcpRouteInfos = resources.tcpRoutes;
    this.udpRouteInfos = resources.udpRoutes;
    this.tlsRouteInfos = resources.tlsRoutes;
    this.extensions = resources.extensions;
    this.policies = resources.policies;
    this.listenerPolicies = resources.listenerPolicies;
    this.backendTlsPolicies = resources.backendTlsPolicies;
    this.backendConfigPolicies = resources.backendConfig.infos;
    this.serviceEndpoints = resources.serviceEndpoints;
    const gateways = deriveGateways(this, resources, { controllerName, mode, observe: opts.observe });
    this.gateways = gateways.gateways;
    const snapshots = deriveSnapshots(this, opts.observe);
    this.xds = snapshots.xds;
    this.endpoints = snapshots.endpoints;
    this.snapshots = snapshots.snapshots;
    const statuses = deriveStatuses(this, gateways, controllerName);
    this.statuses = statuses;
  }

  /** The input collection of a watched kind (kube/watched.ts); undefined for a kind the control plane does not read. */
  inputFor(kind: string): InputCollection<any> | undefined {
    return this.inputs.get(kind);
  }

  /** Every input has its initial state (the informers listed once, or an offline caller loaded everything). */
  markInputsSynced(): void {
    for (const c of this.inputs.values()) c.markSynced();
    this.rejections.markSynced();
  }

  statusCollections(): Collection<StatusUpdate>[] {
    return Object.values(this.statuses);
  }
}

// ---- the stages, in the order their collections are created (the order /snapshots/krt lists them) -------------

/** Per resource, on its own: routes, GatewayExtensions and policies resolved, and each Service's ready endpoints. */
function deriveResources(p: Pipeline, mode: ValidationMode) {
  const rt = p.rt;
  const grantsByNs = p.referenceGrants.index('namespace', (g) => [g.metadata.namespace ?? 'default']);
  const slicesByService = p.endpointSlices.index('service', (s) => {
    const svc = s.metadata.labels?.[SERVICE_NAME_LABEL];
    return svc ? [`${s.metadata.namespace}/${svc}`] : [];
  });
  const routeWorld = (ctx: Ctx): RouteWorld => ({
    service: (ns, name) => ctx.fetch(p.services, `${ns}/${name}`),
    referenceGrants: (ns) => ctx.fetchIndex(grantsByNs, ns),
  });
  const routes = derive(rt, 'Routes', p.httpRoutes, (ctx, r) => buildRouteInfo(r, routeWorld(ctx), mode));
  const routesByGateway = p.httpRoutes.index('parentGateway', routeGatewayKeys);
  const grpcRoutes = derive(rt, 'GRPCRouteInfos', p.grpcRoutes, (ctx, r) =>
    buildGrpcRouteInfo(r, routeWorld(ctx), mode),
  );
  const grpcByGateway = p.grpcRoutes.index('parentGateway', routeGatewayKeys);
  const tcpRoutes = derive(rt, 'TCPRouteInfos', p.tcpRoutes, (ctx, r) =>
    buildL4RouteInfo('TCPRoute', r, routeWorld(ctx)),
  );
  const udpRoutes = derive(rt, 'UDPRouteInfos', p.udpRoutes, (ctx, r) =>
    buildL4RouteInfo('UDPRoute', r, routeWorld(ctx)),
  );
  const tlsRoutes = derive(rt, 'TLSRouteInfos', p.tlsRoutes, (ctx, r) =>
    buildL4RouteInfo('TLSRoute', r, routeWorld(ctx)),
  );
  const tcpByGateway = p.tcpRoutes.index('parentGateway', routeGatewayKeys);
  const udpByGateway = p.udpRoutes.index('parentGateway', routeGatewayKeys);
  const tlsByGateway = p.tlsRoutes.index('parentGateway', routeGatewayKeys);
  const listenerSetsByGateway = p.listenerSets.index('parentGateway', (ls) => {
    const ref = ls.spec?.parentRef;
    if (!ref || (ref.group ?? GATEWAY_GROUP) !== GATEWAY_GROUP || (ref.kind ?? 'Gateway') !== 'Gateway') return [];
    return [`${ref.namespace ?? ls.metadata.namespace ?? 'default'}/${ref.name}`];
  });
  const extensions = derive(rt, 'Extensions', p.gatewayExtensions, (ctx, e) => buildExtensionInfo(e, routeWorld(ctx)));
  const policies = derive(rt, 'Policies', p.trafficPolicies, (ctx, tp) =>
    buildPolicyInfo(tp, { ...routeWorld(ctx), extension: (ns, n) => ctx.fetch(extensions, `${ns}/${n}`) }, mode),
  );
  const policiesByTarget = p.trafficPolicies.index('target', policyTargetKeys);
  const backendTls = deriveBackendTlsInfos(rt, p.backendTlsPoliciesIn, p.configMaps);
  const listenerPolicies = deriveListenerPolicyInfos(rt, p.listenerPoliciesIn, mode);
  const backendConfig = deriveBackendConfigInfos(rt, p.inputFor('BackendConfigPolicy')!);
  const serviceEndpoints = derive(rt, 'ServiceEndpoints', p.services, (ctx, s) =>
    buildServiceEndpoints(s, ctx.fetchIndex(slicesByService, keyOf(s))),
  );
  return {
    routes,
    routesByGateway,
    grpcRoutes,
    grpcByGateway,
    tcpRoutes,
    udpRoutes,
    tlsRoutes,
    tcpByGateway,
    udpByGateway,
    tlsByGateway,
    listenerSetsByGateway,
    extensions,
    policies,
    policiesByTarget,
    backendTlsPolicies: backendTls.infos,
    backendTlsLookup: backendTls.lookup,
    listenerPolicies: listenerPolicies.infos,
    listenerPolicyLookup: listenerPolicies.lookup,
    backendConfig,
    serviceEndpoints,
    grantsByNs,
  };
}

/**
 * Per Gateway of ours: its IR and reports (ir/gateway.ts), and the reports per (Gateway, route) and (Gateway,
 * policy), so a Gateway recomputation only re-derives the statuses of the routes and policies whose report changed.
 */
function deriveGateways(
  p: Pipeline,
  r: ReturnType<typeof deriveResources>,
  o: { controllerName: string; mode: ValidationMode; observe?: PipelineOptions['observe'] },
) {
  const rt = p.rt;
  const policyInfos = (ctx: Ctx, indexKey: string) =>
    fetchDerived(ctx, r.policiesByTarget, indexKey, r.policies, keyOf);
  const gateways = derive(
    rt,
    'Gateways',
    p.gatewaysIn,
    (ctx, gw) => {
      const cls = ctx.fetch(p.gatewayClasses, gw.spec?.gatewayClassName ?? '');
      if (!isOurGateway(gw, cls, o.controllerName)) return undefined;
      const world: GatewayWorld = {
        gatewayClass: (name) => ctx.fetch(p.gatewayClasses, name),
        gatewayParameters: (ns, name) => ctx.fetch(p.gatewayParameters, `${ns}/${name}`),
        routes: (gwKey) => [
          ...fetchDerived(ctx, r.routesByGateway, gwKey, r.routes, keyOf),
          ...fetchDerived(ctx, r.grpcByGateway, gwKey, r.grpcRoutes, keyOf),
        ],
        l4Routes: (key) => [
          ...fetchDerived(ctx, r.tcpByGateway, key, r.tcpRoutes, keyOf),
          ...fetchDerived(ctx, r.udpByGateway, key, r.udpRoutes, keyOf),
          ...fetchDerived(ctx, r.tlsByGateway, key, r.tlsRoutes, keyOf),
        ],
        listenerSets: (gwKey) => ctx.fetchIndex(r.listenerSetsByGateway, gwKey),
        namespace: (name) => ctx.fetch(p.namespaces, name),
        referenceGrants: (ns) => ctx.fetchIndex(r.grantsByNs, ns),
        secret: (ns, name) => ctx.fetch(p.secrets, `${ns}/${name}`),
        configMap: (ns, name) => ctx.fetch(p.configMaps, `${ns}/${name}`),
        policiesTargeting: (kind, ns, name) => policyInfos(ctx, `${kind}/${ns}/${name}`),
        policiesSelecting: (kind, ns) => policyInfos(ctx, `selector/${kind}/${ns}`),
        backendTlsPolicies: r.backendTlsLookup(ctx),
        backendConfigPolicies: r.backendConfig.lookup(ctx),
        service: (ns, name) => ctx.fetch(p.services, `${ns}/${name}`),
        listenerPolicies: r.listenerPolicyLookup(ctx),
      };
      const t0 = performance.now();
      const result = buildGateway(gw, world, { mode: o.mode });
      o.observe?.('gateway', (performance.now() - t0) / 1000);
      return result;
    },
    { redact: redactSecrets },
  );
  const routeReportsByRoute = reportsByObject(rt, 'RouteReports', gateways, 'routes', 'route');
  const l4ReportsByRoute = reportsByObject(rt, 'L4RouteReports', gateways, 'l4Routes', 'route');
  const policyReportsByPolicy = reportsByObject(rt, 'PolicyReports', gateways, 'policies', 'policy');
  const setReportsBySet = reportsByObject(rt, 'ListenerSetReports', gateways, 'listenerSets', 'listenerSet');
  const btlsReportsByPolicy = reportsByObject(rt, 'BackendTLSPolicyReports', gateways, 'backendTlsPolicies', 'policy');
  const lpReportsByPolicy = reportsByObject(rt, 'ListenerPolicyReports', gateways, 'listenerPolicies', 'policy');
  const bcpReports = reportsByObject(rt, 'BackendConfigPolicyReports', gateways, 'backendConfigPolicies', 'policy');
  return {
    bcpReports,
    gateways,
    routeReportsByRoute,
    l4ReportsByRoute,
    policyReportsByPolicy,
    setReportsBySet,
    btlsReportsByPolicy,
    lpReportsByPolicy,
  };
}

/**
 * One kind of the reports the Gateways make about other objects (their routes, the policies attached to them) as a
 * row per (Gateway, object), indexed (`index`) by the object's key: what that object's status is written from.
 */
function reportsByObject<
  K extends
    | 'routes'
    | 'l4Routes'
    | 'policies'
    | 'listenerSets'
    | 'backendTlsPolicies'
    | 'listenerPolicies'
    | 'backendConfigPolicies',
>(rt: Runtime, name: string, gateways: Collection<GatewayResult>, kind: K, index: string) {
  const rows = derive(
    rt,
    name,
    gateways,
    (_ctx, g) =>
      Object.entries(g.reports[kind]).map(([object, report]) => ({
        key: `${g.key}|${object}`,
        object,
        gateway: g.reports.gateway,
        report: report as GatewayResult['reports'][K][string],
      })),
    { keyOf: (x) => x.key },
  );
  return rows.index(index, (x) => [x.object]);
}

/** Per Gateway: its xDS resources (xds/translator), its clusters' endpoints, and the snapshot that holds both. */
function deriveSnapshots(p: Pipeline, observe: PipelineOptions['observe']) {
  const rt = p.rt;
  const xds = derive(
    rt,
    'Xds',
    p.gateways,
    (_ctx, g) => {
      if (!g.ir) return undefined;
      const t0 = performance.now();
      const out = { gateway: g.key, role: g.ir.role, ...translateGateway(g.ir) };
      observe?.('xds', (performance.now() - t0) / 1000);
      return out;
    },
    { redact: redactSecrets },
  );
  const endpoints = derive(rt, 'Endpoints', p.gateways, (ctx, g) => {
    if (!g.ir) return undefined;
    const list = g.ir.clusters.map((c) => {
      const of = (m: { namespace: string; service: string; port: number }) =>
        ctx.fetch(p.serviceEndpoints, `${m.namespace}/${m.service}`)?.ports[String(m.port)] ?? [];
      // A cluster whose BackendTLSPolicy is not accepted gets no endpoints: its requests fail (GEP-1897).
      if (c.tls?.invalid) return translateEndpoints(c.name, []);
      return translateEndpoints(c.name, c.members ? weightedMembers(c.members, of) : of(c));
    });
    return { gateway: g.key, endpoints: list };
  });
  const snapshots = derive(
    rt,
    'Snapshots',
    xds,
    (ctx, x, key): SnapshotResources => ({
      gateway: x.gateway,
      role: x.role,
      listeners: x.listeners,
      routes: x.routes,
      clusters: x.clusters,
      endpoints: ctx.fetch(endpoints, key)?.endpoints ?? [],
    }),
    { redact: redactSecrets },
  );
  return { xds, endpoints, snapshots };
}

/**
 * The endpoints of a cluster of weighted Services: each endpoint weighted `weight × 1000 / endpoints of its Service`
 * (at least 1), so a Service's share follows its weight whatever its number of endpoints.
 */
function weightedMembers(
  members: NonNullable<ClusterIR['members']>,
  endpointsOf: (m: { namespace: string; service: string; port: number }) => EndpointAddress[],
): EndpointAddress[] {
  return members.flatMap((m) => {
    const eps = endpointsOf(m);
    return eps.map((e) => ({ ...e, weight: Math.max(1, Math.round((m.weight * 1000) / eps.length)) }));
  });
}

/** The status of each object the control plane owns a part of (status/build.ts), with the proxies' rejections. */
function deriveStatuses(p: Pipeline, g: ReturnType<typeof deriveGateways>, controllerName: string) {
  const rt = p.rt;
  const rejectionsOf = (ctx: Ctx, key: string) => ctx.fetch(p.rejections, key)?.rejections ?? [];
  const byKey = (a: { key: string }, b: { key: string }) => (a.key < b.key ? -1 : 1);
  const gatewayClassStatuses = derive(rt, 'GatewayClassStatuses', p.gatewayClasses, (_ctx, c) => {
    if (c.spec?.controllerName !== controllerName) return undefined;
    return {
      key: `gatewayclasses/${c.metadata.name}`,
      resource: 'gatewayclasses' as const,
      name: c.metadata.name,
      status: gatewayClassStatus(c.metadata.generation ?? 1, controllerName),
    };
  });
  const gatewayStatuses = derive(rt, 'GatewayStatuses', p.gateways, (ctx, gw) => {
    const [ns, name] = gw.key.split('/');
    const rej = rejectionsOf(ctx, `Gateway/${gw.key}`);
    return {
      key: `gateways/${gw.key}`,
      resource: 'gateways' as const,
      namespace: ns,
      name,
      status: gatewayStatus(gw.reports, {
        service: ctx.fetch(p.services, gw.key),
        deployment: ctx.fetch(p.deployments, gw.key),
        ...(rej.length ? { rejection: rej[rej.length - 1] } : {}),
      }),
    };
  });
  const routeStatuses = derive(rt, 'RouteStatuses', p.httpRoutes, (ctx, r, key) => {
    const reports = ctx.fetchIndex(g.routeReportsByRoute, key).sort(byKey);
    return {
      key: `httproutes/${key}`,
      resource: 'httproutes' as const,
      namespace: r.metadata.namespace,
      name: r.metadata.name,
      status: {
        parents: routeParents(r.metadata.generation ?? 1, reports, rejectionsOf(ctx, `HTTPRoute/${key}`)),
      },
    };
  });
  const policyStatuses = derive(rt, 'PolicyStatuses', p.trafficPolicies, (ctx, tp, key) => {
    const info = ctx.fetch(p.policies, key);
    if (!info) return undefined;
    const reports = ctx.fetchIndex(g.policyReportsByPolicy, key).sort(byKey);
    return {
      key: `trafficpolicies/${key}`,
      resource: 'trafficpolicies' as const,
      namespace: tp.metadata.namespace,
      name: tp.metadata.name,
      status: policyStatus(info, reports, rejectionsOf(ctx, `TrafficPolicy/${key}`)),
    };
  });
  const backendTlsPolicyStatuses = deriveBackendTlsStatuses(rt, p.backendTlsPoliciesIn, g.btlsReportsByPolicy);
  const backendConfigPolicyStatuses = deriveBackendConfigStatuses(
    rt,
    p.inputFor('BackendConfigPolicy')!,
    p.backendConfigPolicies,
    g.bcpReports,
    rejectionsOf,
  );
  const listenerPolicyStatuses = deriveListenerPolicyStatuses(rt, p, g.lpReportsByPolicy);
  const extensionStatuses = derive(rt, 'ExtensionStatuses', p.extensions, (_ctx, e, key) => ({
    key: `gatewayextensions/${key}`,
    resource: 'gatewayextensions' as const,
    namespace: e.ref.namespace,
    name: e.ref.name,
    status: extensionStatus(e),
  }));
  const grpcRouteStatuses = derive(rt, 'GRPCRouteStatuses', p.grpcRoutes, (ctx, r, key) => {
    const reports = ctx.fetchIndex(g.routeReportsByRoute, `GRPCRoute/${key}`).sort(byKey);
    return {
      key: `grpcroutes/${key}`,
      resource: 'grpcroutes' as const,
      namespace: r.metadata.namespace,
      name: r.metadata.name,
      status: {
        parents: routeParents(r.metadata.generation ?? 1, reports, rejectionsOf(ctx, `GRPCRoute/${key}`)),
      },
    };
  });
  const l4 = deriveL4AndListenerSetStatuses(p, g, gatewayStatuses);
  // In the order the writer takes them: the objects first, then the policies.
  return {
    gatewayClassStatuses,
    gatewayStatuses,
    routeStatuses,
    grpcRouteStatuses,
    ...l4,
    policyStatuses,
    listenerPolicyStatuses,
    extensionStatuses,
    backendTlsPolicyStatuses,
    backendConfigPolicyStatuses,
  };
}

/** TCPRoute, UDPRoute and TLSRoute parents (as an HTTPRoute's), and each ListenerSet's status from its Gateway's report. */
function deriveL4AndListenerSetStatuses(
  p: Pipeline,
  g: ReturnType<typeof deriveGateways>,
  gatewayStatuses: Collection<StatusUpdate>,
) {
  const rt = p.rt;
  const byKey = (a: { key: string }, b: { key: string }) => (a.key < b.key ? -1 : 1);
  const l4 = (kind: L4Kind, input: InputCollection<L4Route>) => {
    const resource = `${kind.toLowerCase()}s` as 'tcproutes' | 'udproutes' | 'tlsroutes';
    return derive(rt, `${kind}Statuses`, input, (ctx, r, key) => {
      const reports = ctx.fetchIndex(g.l4ReportsByRoute, `${kind}/${key}`).sort(byKey);
      const rejections = ctx.fetch(p.rejections, `${kind}/${key}`)?.rejections ?? [];
      return {
        key: `${resource}/${key}`,
        resource,
        namespace: r.metadata.namespace,
        name: r.metadata.name,
        status: { parents: routeParents(r.metadata.generation ?? 1, reports, rejections) },
      };
    });
  };
  const listenerSetStatuses = derive(rt, 'ListenerSetStatuses', p.listenerSets, (ctx, ls, key) => {
    const reports = ctx.fetchIndex(g.setReportsBySet, key).sort(byKey);
    if (!reports.length) return undefined;
    const r = reports[0];
    const gw = ctx.fetch(gatewayStatuses, `${r.gateway.namespace}/${r.gateway.name}`);
    const programmed = (gw?.status.conditions as StatusCondition[] | undefined)?.find((c) => c.type === 'Programmed');
    return {
      key: `listenersets/${key}`,
      resource: 'listenersets' as const,
      namespace: ls.metadata.namespace,
      name: ls.metadata.name,
      status: listenerSetStatus(r.report, programmed),
    };
  });
  return {
    tcpRouteStatuses: l4('TCPRoute', p.tcpRoutes),
    udpRouteStatuses: l4('UDPRoute', p.udpRoutes),
    tlsRouteStatuses: l4('TLSRoute', p.tlsRoutes),
    listenerSetStatuses,
  };
}

export type { StatusCondition };
