// TrafficPolicy `compression` → envoy.filters.http.compressor with the gzip library: one filter per policy that sets
// it (`envoy.filters.http.compressor/<ns>/<policy>`: min_content_length and content types are the filter's, not a
// route's), disabled by default, turned on by CompressorPerRoute{overrides} on that policy's routes — Envoy's way of
// enabling a filter per route. Shapes: compressor/v3/compressor.proto, compression/gzip/compressor/v3/gzip.proto.
import type { RouteIR } from '../../ir/types.ts';
import type { Json } from './envoy.ts';

const NAME = 'envoy.filters.http.compressor';
const COMPRESSOR = 'type.googleapis.com/envoy.extensions.filters.http.compressor.v3.Compressor';
const PER_ROUTE = 'type.googleapis.com/envoy.extensions.filters.http.compressor.v3.CompressorPerRoute';
const GZIP = 'type.googleapis.com/envoy.extensions.compression.gzip.compressor.v3.Gzip';

/** The filter a route's compression uses: one per policy (provenance names it). */
function filterName(r: RouteIR): string | undefined {
  const from = r.provenance.compression;
  return r.policy.compression && from ? `${NAME}/${from.replace(/^TrafficPolicy\//, '')}` : undefined;
}

export const compressorFilter = {
  forListener(routes: readonly RouteIR[]) {
    const filters = new Map<string, NonNullable<RouteIR['policy']['compression']>>();
    for (const r of routes) {
      const n = filterName(r);
      if (n) filters.set(n, r.policy.compression!);
    }
    return {
      chain: [...filters.keys()].sort().map((name) => {
        const c = filters.get(name)!;
        const common: Json = { min_content_length: c.minContentLength };
        if (c.contentTypes.length) common.content_type = c.contentTypes;
        return {
          name,
          typed_config: {
            '@type': COMPRESSOR,
            compressor_library: { name: 'gzip', typed_config: { '@type': GZIP } },
            response_direction_config: { common_config: common },
          },
          disabled: true,
        };
      }),
      perRoute(r: RouteIR): Json {
        const n = filterName(r);
        return n ? { [n]: { '@type': PER_ROUTE, overrides: { response_direction_config: {} } } } : {};
      },
    };
  },
};
