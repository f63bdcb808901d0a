// envoy.filters.http.router: the terminal filter. The forwarding itself lives in http/router.ts; this is its
// config (suppress_envoy_headers) and its place in the filter chain.
import type { FilterFactory, HttpFilter } from './types.ts';

export const routerFactory: FilterFactory = {
  canonicalName: 'envoy.filters.http.router',
  configTypes: ['envoy.extensions.filters.http.router.v3.Router'],
  perRouteTypes: [],
  terminal: true,
  create(name, config) {
    if (config.upstream_http_filters?.length) {
      throw new Error('envoy.filters.http.router: upstream_http_filters are not supported');
    }
    const filter: HttpFilter & { suppressEnvoyHeaders: boolean } = {
      name,
      suppressEnvoyHeaders: config.suppress_envoy_headers === true,
    };
    return filter;
  },
};
