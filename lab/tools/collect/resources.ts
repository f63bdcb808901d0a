// The resources a gateway problem is read from, each with its status, as `kubectl get -o yaml` shows them: the Gateway
// API and gwvendor kinds, and the workloads, Services, endpoints and configuration of the collected namespaces. One
// file per namespace and kind (resources/<namespace>/<Kind>.yaml; cluster-scoped ones under resources/_cluster/).
import { stringify } from 'yaml';
import type { KObj } from '../../toolkit/kube.ts';
import { GW_API, VENDOR_API } from '../proxies.ts';
import type { KindRef } from './inventory.ts';
import { redactSecret } from './redact.ts';
import type { Collector } from './types.ts';

const GW_V1BETA1 = 'gateway.networking.k8s.io/v1beta1';
const GW_V1ALPHA2 = 'gateway.networking.k8s.io/v1alpha2';

/** A Gateway API kind the cluster may serve, read at v1 first (the versions of Gateway API v1.6.1's standard bundle). */
const gw = (kind: string, plural: string, older: string[] = []): KindRef => ({
  kind,
  plural,
  apiVersions: [GW_API, ...older],
  namespaced: true,
});

export const GATEWAY_KINDS: KindRef[] = [
  { kind: 'GatewayClass', plural: 'gatewayclasses', apiVersions: [GW_API, GW_V1BETA1], namespaced: false },
  { kind: 'Gateway', plural: 'gateways', apiVersions: [GW_API, GW_V1BETA1], namespaced: true },
  { kind: 'HTTPRoute', plural: 'httproutes', apiVersions: [GW_API, GW_V1BETA1], namespaced: true },
  { kind: 'ReferenceGrant', plural: 'referencegrants', apiVersions: [GW_API, GW_V1BETA1], namespaced: true },
  // The kinds the control plane does not read yet: a bug report shows what users wrote beside the routes it serves.
  gw('GRPCRoute', 'grpcroutes'),
  gw('TLSRoute', 'tlsroutes', [GW_V1ALPHA2]),
  gw('TCPRoute', 'tcproutes', [GW_V1ALPHA2]),
  gw('UDPRoute', 'udproutes', [GW_V1ALPHA2]),
  gw('ListenerSet', 'listenersets'),
  gw('BackendTLSPolicy', 'backendtlspolicies', ['gateway.networking.k8s.io/v1alpha3']),
  { kind: 'GatewayParameters', plural: 'gatewayparameters', apiVersions: [VENDOR_API], namespaced: true },
  { kind: 'TrafficPolicy', plural: 'trafficpolicies', apiVersions: [VENDOR_API], namespaced: true },
  { kind: 'GatewayExtension', plural: 'gatewayextensions', apiVersions: [VENDOR_API], namespaced: true },
  { kind: 'BackendConfigPolicy', plural: 'backendconfigpolicies', apiVersions: [VENDOR_API], namespaced: true },
  { kind: 'ListenerPolicy', plural: 'listenerpolicies', apiVersions: [VENDOR_API], namespaced: true },
];

export const WORKLOAD_KINDS: KindRef[] = [
  { kind: 'Namespace', plural: 'namespaces', apiVersions: ['v1'], namespaced: false },
  { kind: 'Deployment', plural: 'deployments', apiVersions: ['apps/v1'], namespaced: true },
  { kind: 'Pod', plural: 'pods', apiVersions: ['v1'], namespaced: true },
  { kind: 'Service', plural: 'services', apiVersions: ['v1'], namespaced: true },
  { kind: 'EndpointSlice', plural: 'endpointslices', apiVersions: ['discovery.k8s.io/v1'], namespaced: true },
  { kind: 'ConfigMap', plural: 'configmaps', apiVersions: ['v1'], namespaced: true },
  { kind: 'ServiceAccount', plural: 'serviceaccounts', apiVersions: ['v1'], namespaced: true },
  { kind: 'Secret', plural: 'secrets', apiVersions: ['v1'], namespaced: true },
];

export const CLUSTER_DIR = '_cluster';

/** An object as written: no managedFields (noise), a Secret without its values. */
export function cleaned(o: KObj): KObj {
  const out = o.kind === 'Secret' ? redactSecret(o) : structuredClone(o);
  if (out.metadata) delete out.metadata.managedFields;
  return out;
}

/** Objects as one multi-document YAML; long strings stay on one line so redaction finds every value whole. */
export function yamlDocs(objs: KObj[]): string {
  return objs.map((o) => stringify(o, { lineWidth: 0 })).join('---\n');
}

export const resourcesCollector: Collector = {
  name: 'resources',
  what: 'Gateway API and gwvendor resources with their statuses; Deployments, Pods, Services, EndpointSlices, ConfigMaps, ServiceAccounts, Namespaces; Secrets as metadata only',
  async run({ inventory }, out) {
    const notes: string[] = [];
    const errors: string[] = [];
    let count = 0;
    await Promise.all(
      [...GATEWAY_KINDS, ...WORKLOAD_KINDS].map(async (ref) => {
        try {
          const listed = await inventory.list(ref);
          if (!listed) {
            notes.push(`${ref.kind} (${ref.apiVersions.join(' or ')}) is not served by this cluster`);
            return;
          }
          const byDir = new Map<string, KObj[]>();
          for (const o of listed.items) {
            const dir = ref.namespaced ? (o.metadata?.namespace ?? CLUSTER_DIR) : CLUSTER_DIR;
            byDir.set(dir, [...(byDir.get(dir) ?? []), cleaned(o)]);
          }
          for (const [dir, objs] of byDir) {
            count += objs.length;
            await out.write(`resources/${dir}/${ref.kind}.yaml`, yamlDocs(objs));
          }
        } catch (err) {
          errors.push(`${ref.kind}: ${(err as Error).message}`);
        }
      }),
    );
    notes.sort();
    notes.unshift(`${count} objects`);
    return { notes, errors };
  },
};
