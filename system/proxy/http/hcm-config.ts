// The HTTP connection manager's own settings compiled from its config (Envoy's HttpConnectionManagerConfig): stat
// prefix, codec, server header, forwarding and request id headers, host port stripping, timeouts, and how the HTTP/1
// codec reads request-targets. Routes, filters and access logs are compiled by hcm.ts with their own modules.
import { ConfigError, durationMs } from '../config/errors.ts';
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
}

/** Validates and compiles the HCM's own fields; throws ConfigError with the reason a NACK carries. */
export function compileHcmConfig(cfg: J): { config: HcmConfig; targetOptions: TargetOptions } {
  const statPrefix = String(cfg.stat_prefix ?? '');
  if (!statPrefix) throw new ConfigError('stat_prefix: value length must be at least 1 characters');
  const codec = cfg.codec_type ?? 'AUTO';
  if (codec === 'HTTP2' || codec === 'HTTP3') {
    throw new ConfigError(`codec_type ${codec} is not supported: this proxy serves HTTP/1.1 listeners`);
  }
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
