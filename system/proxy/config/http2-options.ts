// Envoy's `config.core.v3.Http2ProtocolOptions` compiled for node:http2, downstream (the HCM's
// http2_protocol_options) and upstream (a cluster's HttpProtocolOptions.explicit_http_config.http2_protocol_options).
// Defaults are Envoy's (api/envoy/config/core/v3/protocol.proto: max_concurrent_streams 2147483647, initial stream and
// connection windows 268435456, hpack_table_size 4096); ranges are checked by the protos' validate rules before this
// runs (shared/envoy/validate.ts). The fields this proxy cannot honour are refused (NACK), not ignored.
import { ConfigError } from './errors.ts';

type J = Record<string, any>;

export interface Http2Options {
  maxConcurrentStreams: number;
  /** SETTINGS_INITIAL_WINDOW_SIZE: each stream's receive window. */
  initialStreamWindowSize: number;
  /** The connection's receive window (a WINDOW_UPDATE on stream 0 after the preface). */
  initialConnectionWindowSize: number;
  hpackTableSize: number;
}

/** Envoy's defaults (protocol.proto). */
export const HTTP2_DEFAULTS: Http2Options = {
  maxConcurrentStreams: 2147483647,
  initialStreamWindowSize: 268435456,
  initialConnectionWindowSize: 268435456,
  hpackTableSize: 4096,
};

const HONOURED = new Set([
  'max_concurrent_streams',
  'initial_stream_window_size',
  'initial_connection_window_size',
  'hpack_table_size',
]);

/** A UInt32Value in proto JSON: a number, or `{ value }` in the canonical form some encoders emit. */
export function u32(v: unknown): number | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'object') return u32((v as J).value);
  const n = Number(v);
  return Number.isFinite(n) ? n : undefined;
}

/** Http2ProtocolOptions → node:http2 settings; ConfigError naming `where` for a field not honoured here. */
export function compileHttp2Options(o: J | undefined, where: string): Http2Options {
  if (!o) return { ...HTTP2_DEFAULTS };
  for (const f of Object.keys(o)) {
    if (!HONOURED.has(f)) throw new ConfigError(`${where}.${f} is not supported`);
  }
  return {
    maxConcurrentStreams: u32(o.max_concurrent_streams) ?? HTTP2_DEFAULTS.maxConcurrentStreams,
    initialStreamWindowSize: u32(o.initial_stream_window_size) ?? HTTP2_DEFAULTS.initialStreamWindowSize,
    initialConnectionWindowSize: u32(o.initial_connection_window_size) ?? HTTP2_DEFAULTS.initialConnectionWindowSize,
    hpackTableSize: u32(o.hpack_table_size) ?? HTTP2_DEFAULTS.hpackTableSize,
  };
}
