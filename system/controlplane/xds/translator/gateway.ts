// One Gateway's IR → its Listeners (HTTP, then TCP and UDP: l4.ts), RouteConfigurations and Clusters, in canonical proto3 JSON (snake_case, "@type"
// on each resource, enums by name, durations as "15s", default values left out), as they go on the wire. Pure: the
// pipeline calls it per Gateway, and nothing here knows of snapshots or proxies.
import type { GatewayIR } from '../../ir/types.ts';
import { translateCluster } from './cluster.ts';
import { routeHashPolicy } from './cluster-settings.ts';
import type { Json } from './envoy.ts';
import { filtersFor } from './http-filters.ts';
import { translateL4Listener } from './l4.ts';
import { translateListener } from './listener.ts';
import { translateRouteConfigs } from './route.ts';

export interface XdsResources {
  listeners: Json[];
  routes: Json[];
  clusters: Json[];
}

export function translateGateway(ir: GatewayIR): XdsResources {
  const listeners: Json[] = [];
  const routes: Json[] = [];
  // The route hash_policy of each consistent-hash cluster, worked out once here rather than per route sent to it.
  const hashPolicies = new Map<string, Json[]>();
  for (const c of ir.clusters) {
    const h = routeHashPolicy(c);
    if (h) hashPolicies.set(c.name, h);
  }
  for (const l of ir.listeners) {
    const filters = filtersFor(l, ir);
    listeners.push(translateListener(l, filters.chain));
    routes.push(...translateRouteConfigs(l, filters.perRoute, hashPolicies));
  }
  for (const l of ir.l4Listeners ?? []) listeners.push(translateL4Listener(l));
  return { listeners, routes, clusters: ir.clusters.map(translateCluster) };
}
