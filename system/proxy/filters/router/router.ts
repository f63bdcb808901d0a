// envoy.filters.http.router, the terminal filter of every HTTP connection manager's chain (filter-chain.ts keeps it
// last, as Envoy does): its config (suppress_envoy_headers), its http.<stat_prefix>.* stats, and its decodeHeaders,
// which answers every request that reaches it: 404 NR without a route, the route's direct response or redirect,
// 503 (or the route's cluster_not_found_response_code) NC for an unknown cluster, else the request goes to the
// cluster chosen (plain, from a header, or weighted) through an UpstreamCall (upstream-call.ts).
import type { WeightedCluster } from '../../config/route.ts';
import { pickWeighted } from '../../config/weighted-pick.ts';
import type { FilterContext, FilterFactory, FilterStream } from '../filter-api.ts';
import { pathOnly, redirectLocation } from './rewrites.ts';
import { forwardUpgrade, upgradeStats } from './upgrade.ts';
import { type RouterContext, type RouterStats, UpstreamCall } from './upstream-call.ts';

export const routerFactory: FilterFactory = {
  canonicalName: 'envoy.filters.http.router',
  configTypes: ['envoy.extensions.filters.http.router.v3.Router'],
  perRouteTypes: [],
  terminal: true,
  create(name, config, ctx) {
    if (config.upstream_http_filters?.length) {
      throw new Error('envoy.filters.http.router: upstream_http_filters are not supported');
    }
    const log = ctx.logs.logger('router');
    const suppressEnvoyHeaders = config.suppress_envoy_headers === true;
    const router: RouterContext = {
      clusters: ctx.clusters,
      log,
      stats: routerStats(ctx),
      suppressEnvoyHeaders,
      upgrade: { log, suppressEnvoyHeaders, stats: upgradeStats(ctx.stats, ctx.statPrefix) },
    };
    return {
      name,
      decodeHeaders(s) {
        routeRequest(router, s);
        return false;
      },
    };
  },
};

function routerStats(ctx: FilterContext): RouterStats {
  const p = ctx.statPrefix;
  return {
    no_route: ctx.stats.counter(p + 'no_route'),
    no_cluster: ctx.stats.counter(p + 'no_cluster'),
    rq_redirect: ctx.stats.counter(p + 'rq_redirect'),
    rq_direct_response: ctx.stats.counter(p + 'rq_direct_response'),
    rq_total: ctx.stats.counter(p + 'rq_total'),
    rq_reset_after_downstream_response_started: ctx.stats.counter(p + 'rq_reset_after_downstream_response_started'),
  };
}

/** The route's action for one request. */
function routeRequest(router: RouterContext, s: FilterStream): void {
  const log = router.log;
  const route = s.route;
  if (!route) {
    router.stats.no_route.inc();
    if (log.on('debug')) log.debug(`no route match for URL '${pathOnly(s.path)}'`, s.tags);
    s.sendLocalReply(404, '', { flag: 'NR', details: 'route_not_found' });
    return;
  }
  const a = route.action;
  if (a.kind === 'direct') {
    router.stats.rq_direct_response.inc();
    s.sendLocalReply(a.status, a.body ?? '', { routeMutations: true, details: 'direct_response' });
    return;
  }
  if (a.kind === 'redirect') {
    router.stats.rq_redirect.inc();
    s.sendLocalReply(a.code, '', {
      headers: { location: redirectLocation(s, a) },
      routeMutations: true,
      details: 'direct_response',
    });
    return;
  }
  router.stats.rq_total.inc();
  let weighted: WeightedCluster | undefined;
  let clusterName: string | undefined;
  if (a.weighted) {
    weighted = pickWeighted(a.weighted.clusters, a.weighted.total);
    clusterName = weighted.name;
  } else if (a.clusterHeader) {
    clusterName = s.header(a.clusterHeader) ?? '';
  } else {
    clusterName = a.cluster;
  }
  const cluster = clusterName ? router.clusters.get(clusterName) : undefined;
  if (!cluster) {
    router.stats.no_cluster.inc();
    if (log.on('debug')) log.debug(`unknown cluster '${clusterName ?? ''}'`, s.tags);
    s.sendLocalReply(a.notFoundCode, '', { flag: 'NC', details: 'cluster_not_found', routeMutations: true });
    return;
  }
  if (log.on('debug')) log.debug(`cluster '${cluster.name}' match for URL '${pathOnly(s.path)}'`, s.tags);
  s.info.upstreamCluster = cluster.name;
  if (s.upgrade) {
    const up = s as FilterStream & { upgrade: NonNullable<FilterStream['upgrade']> };
    forwardUpgrade(router.upgrade, up, a, cluster, weighted);
    return;
  }
  new UpstreamCall(router, s, a, cluster, weighted).start();
}
