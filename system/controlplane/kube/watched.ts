// Everything the control plane reads from the cluster, listed once: per kind its API version and resource, whether it
// is namespaced, the label selector its informer lists with, and the pipeline input collection that holds it. The
// informers (informers.ts), the pipeline's inputs (pipeline.ts), offline translation (offline.ts), the controller's
// initial sync (controlplane.ts) and the translate tool's narrowing (lab/tools/translate-tool-input.ts) all derive
// from this table; the install manifest's ClusterRole grants list and watch on exactly these
// (system/manifests/install/install.test.ts).
import { GATEWAY_GROUP, VENDOR_GROUP } from '../model.ts';

export interface WatchedKind {
  kind: string;
  /** `<group>/<version>`, or `v1` for the core group. */
  apiVersion: string;
  /** For logs, metrics and RBAC: `<plural>.<group>`, or `<plural>` for the core group. */
  resource: string;
  /** The list/watch path, e.g. `/apis/gateway.networking.k8s.io/v1/httproutes`. */
  path: string;
  namespaced: boolean;
  /** The pipeline's input collection of this kind (its name in /snapshots/krt and the metrics). */
  collection: string;
  /** Only objects with these labels are read (the informer's `labelSelector`, API syntax). */
  labelSelector?: string;
  /**
   * A kind whose CRD a cluster may not have yet (Gateway API kinds newer than v1.3.0): while the API server answers 404,
   * its informer counts as synced with no objects and keeps retrying, so the control plane still gets ready.
   */
  optional?: boolean;
  /**
   * What the informer keeps of each object (client-go's cache TransformFunc): ConfigMaps are read for one key only, so
   * their other data is dropped before they reach the store.
   */
  transform?: (o: any) => any;
}

function watched<K extends string>(
  group: string,
  version: string,
  kind: K,
  plural: string,
  o: {
    namespaced?: boolean;
    collection: string;
    labelSelector?: string;
    optional?: boolean;
    transform?: (o: any) => any;
  },
): WatchedKind & { kind: K } {
  const apiVersion = group ? `${group}/${version}` : version;
  return {
    kind,
    apiVersion,
    resource: group ? `${plural}.${group}` : plural,
    path: group ? `/apis/${apiVersion}/${plural}` : `/api/${version}/${plural}`,
    namespaced: o.namespaced ?? true,
    collection: o.collection,
    ...(o.labelSelector ? { labelSelector: o.labelSelector } : {}),
    ...(o.optional ? { optional: true } : {}),
    ...(o.transform ? { transform: o.transform } : {}),
  };
}

/** A ConfigMap reduced to what BackendTLSPolicies read: its identity and the `ca.crt` key (no managedFields). */
export function caOnly(o: {
  apiVersion?: string;
  kind?: string;
  metadata: Record<string, unknown>;
  data?: Record<string, string>;
}): unknown {
  const { name, namespace, uid, resourceVersion, generation, creationTimestamp, deletionTimestamp } =
    o.metadata as Record<string, unknown>;
  const metadata = Object.fromEntries(
    Object.entries({ name, namespace, uid, resourceVersion, generation, creationTimestamp, deletionTimestamp }).filter(
      ([, v]) => v !== undefined,
    ),
  );
  const ca = o.data?.['ca.crt'];
  return {
    apiVersion: o.apiVersion ?? 'v1',
    kind: o.kind ?? 'ConfigMap',
    metadata,
    ...(ca !== undefined ? { data: { 'ca.crt': ca } } : {}),
  };
}

/** The kinds, in the order the pipeline creates their collections (and /snapshots/krt lists them). */
export const WATCHED = [
  watched(GATEWAY_GROUP, 'v1', 'GatewayClass', 'gatewayclasses', { namespaced: false, collection: 'GatewayClasses' }),
  watched(GATEWAY_GROUP, 'v1', 'Gateway', 'gateways', { collection: 'Gateways' }),
  watched(GATEWAY_GROUP, 'v1', 'HTTPRoute', 'httproutes', { collection: 'HTTPRoutes' }),
  watched(GATEWAY_GROUP, 'v1', 'GRPCRoute', 'grpcroutes', { collection: 'GRPCRoutes', optional: true }),
  // v1 as Gateway API v1.6.1 serves them (standard channel).
  watched(GATEWAY_GROUP, 'v1', 'TCPRoute', 'tcproutes', { collection: 'TCPRoutes', optional: true }),
  watched(GATEWAY_GROUP, 'v1', 'UDPRoute', 'udproutes', { collection: 'UDPRoutes', optional: true }),
  watched(GATEWAY_GROUP, 'v1', 'TLSRoute', 'tlsroutes', { collection: 'TLSRoutes', optional: true }),
  watched(GATEWAY_GROUP, 'v1', 'ListenerSet', 'listenersets', { collection: 'ListenerSets', optional: true }),
  // GEP-1897, v1 in Gateway API v1.6.1 (standard channel); ir/backend-tls.ts.
  watched(GATEWAY_GROUP, 'v1', 'BackendTLSPolicy', 'backendtlspolicies', {
    collection: 'BackendTLSPolicies',
    optional: true,
  }),
  watched(GATEWAY_GROUP, 'v1', 'ReferenceGrant', 'referencegrants', { collection: 'ReferenceGrants' }),
  watched('', 'v1', 'Namespace', 'namespaces', { namespaced: false, collection: 'Namespaces' }),
  watched('', 'v1', 'Service', 'services', { collection: 'Services' }),
  // For HTTPS listeners' certificateRefs (ResolvedRefs); /snapshots/krt shows their keys only (pipeline.ts).
  watched('', 'v1', 'Secret', 'secrets', { collection: 'Secrets' }),
  // For BackendTLSPolicies' caCertificateRefs: only the `ca.crt` key is kept (caOnly), whatever else they hold.
  watched('', 'v1', 'ConfigMap', 'configmaps', { collection: 'ConfigMaps', transform: caOnly }),
  watched('discovery.k8s.io', 'v1', 'EndpointSlice', 'endpointslices', { collection: 'EndpointSlices' }),
  // Only the proxies' Deployments (for the Gateways' Programmed condition and the deployer).
  watched('apps', 'v1', 'Deployment', 'deployments', {
    collection: 'ProxyDeployments',
    labelSelector: 'gateway.networking.k8s.io/gateway-name',
  }),
  watched(VENDOR_GROUP, 'v1alpha1', 'GatewayParameters', 'gatewayparameters', { collection: 'GatewayParameters' }),
  watched(VENDOR_GROUP, 'v1alpha1', 'TrafficPolicy', 'trafficpolicies', { collection: 'TrafficPolicies' }),
  watched(VENDOR_GROUP, 'v1alpha1', 'GatewayExtension', 'gatewayextensions', { collection: 'GatewayExtensions' }),
  watched(VENDOR_GROUP, 'v1alpha1', 'ListenerPolicy', 'listenerpolicies', { collection: 'ListenerPolicies' }),
  // Cluster settings per Service (port); ir/backend-config-policy.ts.
  watched(VENDOR_GROUP, 'v1alpha1', 'BackendConfigPolicy', 'backendconfigpolicies', {
    collection: 'BackendConfigPolicies',
  }),
] as const satisfies readonly WatchedKind[];

export type WatchedKindName = (typeof WATCHED)[number]['kind'];

/** The table's entry for `kind`, or undefined when the control plane does not read it. */
export function watchedKind(kind: string): WatchedKind | undefined {
  return WATCHED.find((w) => w.kind === kind);
}
