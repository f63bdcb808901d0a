// `explain` end to end: parse the target, gather exactly what the analysis needs (the objects, the proxies of the
// Gateways involved, the Services behind ext auth), and analyse. Read-only: lists, gets, pods/log-free port-forwards.
import type { Kube } from '../../toolkit/kube.ts';
import {
  type ExplainKind,
  explain,
  gatewaysNeeded,
  KINDS,
  type Report,
  servicesNeeded,
  type Target,
} from './analyze.ts';
import { gatherObjects, gatherProxies, gatherServices, type World } from './world.ts';

const ALIASES: Record<string, ExplainKind> = {
  httproute: 'HTTPRoute',
  httproutes: 'HTTPRoute',
  route: 'HTTPRoute',
  grpcroute: 'GRPCRoute',
  grpcroutes: 'GRPCRoute',
  tcproute: 'TCPRoute',
  tcproutes: 'TCPRoute',
  udproute: 'UDPRoute',
  udproutes: 'UDPRoute',
  tlsroute: 'TLSRoute',
  tlsroutes: 'TLSRoute',
  gateway: 'Gateway',
  gateways: 'Gateway',
  gtw: 'Gateway',
  trafficpolicy: 'TrafficPolicy',
  trafficpolicies: 'TrafficPolicy',
  tp: 'TrafficPolicy',
  gatewayextension: 'GatewayExtension',
  gatewayextensions: 'GatewayExtension',
  ge: 'GatewayExtension',
  backendconfigpolicy: 'BackendConfigPolicy',
  backendconfigpolicies: 'BackendConfigPolicy',
  bcp: 'BackendConfigPolicy',
  listenerpolicy: 'ListenerPolicy',
  listenerpolicies: 'ListenerPolicy',
  lp: 'ListenerPolicy',
};

/**
 * `<kind>/<name>` (kind as kubectl spells it: HTTPRoute, httproute, httproutes, tp, ...) in a namespace; a Gateway's
 * listener as `gateway/<name>/<listener>`.
 */
export function parseTarget(arg: string | undefined, namespace: string): Target {
  const m =
    /^([A-Za-z]+)(?:\.[a-z0-9.-]+)?\/([a-z0-9]([-a-z0-9.]*[a-z0-9])?)(?:\/([a-z0-9]([-a-z0-9]*[a-z0-9])?))?$/.exec(
      arg ?? '',
    );
  const kind = m && ALIASES[m[1].toLowerCase()];
  if (!m || !kind || (m[4] !== undefined && kind !== 'Gateway')) {
    throw new Error(
      `explain needs <kind>/<name>, kind one of ${KINDS.join(', ')}, or gateway/<name>/<listener> (got ${JSON.stringify(arg ?? '')}); e.g. npm run explain -- httproute/web -n default`,
    );
  }
  return { kind, namespace, name: m[2], ...(m[4] !== undefined ? { listener: m[4] } : {}) };
}

export async function gatherWorld(kube: Kube, t: Target): Promise<World> {
  const objects = await gatherObjects(kube);
  const [px, services] = await Promise.all([
    gatherProxies(kube, gatewaysNeeded(objects, t)),
    gatherServices(kube, servicesNeeded(objects, t)),
  ]);
  return { ...objects, services, proxies: px.proxies, ...(px.xdsError ? { xdsError: px.xdsError } : {}) };
}

export async function explainTarget(kube: Kube, t: Target): Promise<Report> {
  return explain(await gatherWorld(kube, t), t);
}
