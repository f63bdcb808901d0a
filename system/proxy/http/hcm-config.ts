// The HTTP connection manager's own settings compiled from its config (Envoy's HttpConnectionManagerConfig): stat
// prefix, codec, server header, forwarding and request id headers, host port stripping, timeouts, and how the HTTP/1
// codec reads request-targets; the codec (codec_type, http2_protocol_options) and the request header limits
// (max_request_headers_kb, common_http_protocol_options.max_headers_count) listener/http-codec.ts applies. Routes, filters and access logs are compiled by hcm.ts with their own modules.
import { ConfigError, durationMs } from '../config/errors.ts';
import { compileHttp2Options, type Http2Options, u32 } from '../config/http2-options.ts';
import { compileUpgradeConfigs, type UpgradeMap } from '../config/upgrade-config.ts';
import type { TargetOptions } from './request-target.ts';

type J = Record<string, any>;

export interface HcmConfig {
  statPrefix: string;
  serverName: string;
  serverHeaderTransformation: 'OVERWRITE' | 'APPEND_IF_ABSENT' | 'PASS_THROUGH';
  useRemoteAddress: boolean;
  /** xff_num_trusted_hops: proxies in front whose x-forwarded-for entries are trusted (the client address). */
  xffNumTrustedHops: number;
  /** http_protocol_options.header_key_format.stateful_formatter preserve_case: HTTP/1 header names keep their case. */
  preserveCase: boolean;
  skipXffAppend: boolean;
  generateRequestId: boolean;
  preserveExternalRequestId: boolean;
  alwaysSetRequestIdInResponse: boolean;
  stripAnyHostPort: boolean;
  stripMatchingHostPort: boolean;
  stripTrailingHostDot: boolean;
  requestTimeoutMs: number;
  via: string | undefined;
  mergeSlashes: boolean;
  /** upgrade_configs: upgrade type → enabled (http/upgrade.ts). */
  upgrades: UpgradeMap;
  /** stream_idle_timeout (Envoy's default 5 min; 0 disables): what idles out an upgraded stream. */
  streamIdleTimeoutMs: number;
  /** codec_type: AUTO picks HTTP/2 by ALPN `h2` or the connection preface, else HTTP/1.1. */
  codec: 'AUTO' | 'HTTP1' | 'HTTP2';
  /** http2_protocol_options, Envoy's defaults where unset. */
  http2: Http2Options;
  /** max_request_headers_kb (Envoy's default 60) and common_http_protocol_options.max_headers_count (100). */
  maxRequestHeadersKb: number;
  maxHeadersCount: number;
}

/** max_request_headers_kb's PGV bound (lte: 8192): the HTTP/1 server's own header limit sits above it. */
export const MAX_HEADERS_KB_LIMIT = 8192;

/** Envoy's HeaderMap limits: entries (pseudo headers included) and bytes (names and values). */
export function headerOverflow(raw: string[], cfg: HcmConfig): boolean {
  if (raw.length / 2 > cfg.maxHeadersCount) return true;
  let bytes = 0;
  for (const s of raw) bytes += Buffer.byteLength(s);
  return bytes > cfg.maxRequestHeadersKb * 1024;
}

/** Validates and compiles the HCM's own fields; throws ConfigError with the reason a NACK carries. */
export function compileHcmConfig(cfg: J): { config: HcmConfig; targetOptions: TargetOptions } {
  const statPrefix = String(cfg.stat_prefix ?? '');
  if (!statPrefix) throw new ConfigError('stat_prefix: value length must be at least 1 characters');
  const codec = cfg.codec_type ?? 'AUTO';
  if (codec === 'HTTP3') throw new ConfigError(`codec_type ${codec} is not supported: HTTP/3 (QUIC) is not served`);
  if (cfg.http3_protocol_options) throw new ConfigError('http3_protocol_options is not supported');
  const config: HcmConfig = {
    statPrefix,
    serverName: cfg.server_name || 'envoy',
    serverHeaderTransformation: cfg.server_header_transformation ?? 'OVERWRITE',
    useRemoteAddress: cfg.use_remote_address === true,
    xffNumTrustedHops: u32(cfg.xff_num_trusted_hops) ?? 0,
    preserveCase: preserveCase(cfg.http_protocol_options?.header_key_format),
    skipXffAppend: cfg.skip_xff_append === true,
    generateRequestId: cfg.generate_request_id !== false,
    preserveExternalRequestId: cfg.preserve_external_request_id === true,
    alwaysSetRequestIdInResponse: cfg.always_set_request_id_in_response === true,
    stripAnyHostPort: cfg.strip_any_host_port === true,
    stripMatchingHostPort: cfg.strip_matching_host_port === true,
    stripTrailingHostDot: cfg.strip_trailing_host_dot === true,
    requestTimeoutMs: durationMs(cfg.request_timeout) ?? 0,
    via: cfg.via || undefined,
    mergeSlashes: cfg.merge_slashes === true,
    upgrades: compileUpgradeConfigs(cfg.upgrade_configs, 'HttpConnectionManager'),
    streamIdleTimeoutMs: durationMs(cfg.stream_idle_timeout) ?? 300_000,
    codec,
    http2: compileHttp2Options(cfg.http2_protocol_options, 'http2_protocol_options'),
    maxRequestHeadersKb: u32(cfg.max_request_headers_kb) ?? 60,
    maxHeadersCount: u32(cfg.common_http_protocol_options?.max_headers_count) ?? 100,
  };
  // Envoy validates the scheme of absolute URIs on an edge HCM: use_remote_address and no trusted hops.
  const targetOptions: TargetOptions = {
    allowAbsoluteUrl: cfg.http_protocol_options?.allow_absolute_url !== false,
    validateScheme: config.useRemoteAddress && Number(cfg.xff_num_trusted_hops ?? 0) === 0,
    tls: false,
  };
  if (config.stripAnyHostPort && config.stripMatchingHostPort) {
    throw new ConfigError('Error: Only one of `strip_matching_host_port` or `strip_any_host_port` can be set.');
  }
  return { config, targetOptions };
}

const PRESERVE_CASE = 'envoy.extensions.http.header_formatters.preserve_case.v3.PreserveCaseFormatterConfig';

/** header_key_format: the preserve_case stateful formatter, or none; proper_case_words and others are refused. */
function preserveCase(f: J | undefined): boolean {
  if (!f) return false;
  if (f.proper_case_words)
    throw new ConfigError('http_protocol_options.header_key_format.proper_case_words is not supported');
  const sf = f.stateful_formatter as J | undefined;
  if (!sf) return false;
  const t = String(sf.typed_config?.['@type'] ?? '');
  if (t.slice(t.lastIndexOf('/') + 1) !== PRESERVE_CASE) {
    throw new ConfigError(
      `Didn't find a registered implementation for '${sf.name ?? ''}' with type URL: '${t.slice(t.lastIndexOf('/') + 1)}'`,
    );
  }
  if (sf.typed_config.forward_reason_phrase || sf.typed_config.formatter_type_on_envoy_headers) {
    throw new ConfigError('preserve_case: forward_reason_phrase and formatter_type_on_envoy_headers are not supported');
  }
  return true;
}
