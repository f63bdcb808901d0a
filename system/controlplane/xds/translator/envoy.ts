// The Envoy vocabulary the translator's files share: resources as canonical proto3 JSON objects, the ADS config
// source every dynamic resource points at, the names of the HCM and router filters, FractionalPercent, and hasKeys.
export type Json = Record<string, unknown>;

/** True when the object has a key, found without listing them (asked of every route's policy and per-filter config). */
export function hasKeys(o: object): boolean {
  for (const _ in o) return true;
  return false;
}

/** Dynamic resources (RDS, EDS) come over the one ADS stream, v3. */
export const ADS_SOURCE = { ads: {}, resource_api_version: 'V3' };

export const HCM = {
  name: 'envoy.filters.network.http_connection_manager',
  type: 'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager',
};

export const ROUTER = {
  name: 'envoy.filters.http.router',
  type: 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router',
};

/**
 * The Http2ProtocolOptions Envoy Gateway sets on every HCM and on every HTTP/2 cluster (internal/xds/translator/
 * listener.go http2ProtocolOptions: http2MaxConcurrentStreamsLimit 100, http2InitialStreamWindowSize 64 KiB,
 * http2InitialConnectionWindowSize 1 MiB).
 */
export const HTTP2_PROTOCOL_OPTIONS = {
  max_concurrent_streams: 100,
  initial_stream_window_size: 65536,
  initial_connection_window_size: 1048576,
};

/** Fraction of requests in parts per million → FractionalPercent (HUNDRED when it is a whole percentage). */
export function fractionalPercent(perMillion: number): Json {
  if (perMillion % 10_000 === 0) {
    const n = perMillion / 10_000;
    return n ? { numerator: n } : {};
  }
  return { numerator: perMillion, denominator: 'MILLION' };
}
