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
