// What most scenarios set up around a Gateway: the sample application as its backend in the scenario's namespace,
// and the URL its load balancer serves a listener port on.
import { readManifest } from '../../lab/install.ts';
import type { KObj, Kube } from '../../lab/toolkit/kube.ts';
import { waitFor } from '../../lab/toolkit/wait.ts';

/** The sample application's Deployment and Service (`sampleapp:8000`), in `namespace`. */
export function sampleBackend(namespace: string): KObj[] {
  return readManifest('sampleapp.yaml')
    .filter((d) => d.kind !== 'Namespace')
    .map((d) => ({ ...d, metadata: { ...d.metadata, namespace } }));
}

/** Where a Gateway listener port is served: the load balancer address, the port, and the Service. */
export interface GatewayAddress {
  address: string;
  port: number;
  svc: KObj;
}

/**
 * Contract 4.3 "read gateway address": `status.loadBalancer.ingress[0]` (ip or hostname) of the Gateway's Service once
 * it has one and serves `port`, and the port as served: the lab serves port p on p+8000 when p cannot be bound and
 * says so in the annotation `gwlab.dev/lb-port-<p>` (interfaces page).
 */
export async function gatewayAddress(
  kube: Kube,
  namespace: string,
  name: string,
  port: number,
): Promise<GatewayAddress> {
  return waitFor(`the load balancer address of Service ${namespace}/${name} with port ${port}`, async () => {
    const svc = await kube.get('v1', 'Service', name, namespace);
    const ing = svc?.status?.loadBalancer?.ingress?.[0];
    const address: string | undefined = ing?.ip ?? ing?.hostname;
    const has = svc?.spec?.ports?.some((p: { port: number }) => p.port === port);
    const served = Number(svc?.metadata?.annotations?.[`gwlab.dev/lb-port-${port}`] ?? port);
    return { ok: !!address && !!has, value: { address: address!, port: served, svc: svc! }, seen: svc?.status };
  });
}

/** `http://<LB address>:<port>` of a Gateway's Service (gatewayAddress). */
export async function gatewayUrl(kube: Kube, namespace: string, name: string, port: number): Promise<string> {
  const a = await gatewayAddress(kube, namespace, name, port);
  return `http://${a.address}:${a.port}`;
}

/** Namespace `ns` and Gateway `gw` in it: HTTP on 8080, taking routes from `from` namespaces, as YAML. */
export function namespaceWithGateway(ns: string, from: 'All' | 'Same' = 'All'): string {
  return `
apiVersion: v1
kind: Namespace
metadata: {name: ${ns}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: ${ns}}
spec:
  gatewayClassName: gwvendor
  listeners: [{name: http, protocol: HTTP, port: 8080, allowedRoutes: {namespaces: {from: ${from}}}}]
`;
}

/**
 * The setup most scenarios start from: namespaceWithGateway(ns) and HTTPRoute `web` for `host` to the sample
 * application's Service (`sampleapp:8000`), as YAML.
 */
export function gatewayWithRoute(ns: string, host: string): string {
  return `${namespaceWithGateway(ns)}---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web, namespace: ${ns}}
spec:
  parentRefs: [{name: gw}]
  hostnames: [${host}]
  rules: [{backendRefs: [{name: sampleapp, port: 8000}]}]
`;
}
