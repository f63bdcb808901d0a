// The HTTP filter contract: a factory per config type that builds one filter per HCM (at config time) and parses
// per-route configs (typed_per_filter_config); the filter runs per request on the decode (request) path and may
// add response headers on the encode path. A filter stops the chain by sending a local reply.

import type { ActiveStream } from '../http/active-stream.ts';
import type { Logger, LogRegistry } from '../log.ts';
import type { StatsStore } from '../stats.ts';
import type { ClusterManagerView } from '../upstream/cluster-manager-view.ts';

export type J = Record<string, any>;

export interface FilterContext {
  stats: StatsStore;
  logs: LogRegistry;
  log: Logger;
  clusters: ClusterManagerView;
  /** `http.<stat_prefix>.` of the HCM the filter belongs to. */
  statPrefix: string;
  /** Server-wide state some filters consult (health check filter). */
  server: { healthCheckFailed(): boolean; isLive(): boolean };
}

export interface HttpFilter {
  /** The name given in http_filters[].name; per-route configs are keyed by it. */
  readonly name: string;
  /**
   * Request path. Return true to continue, false when the filter answered (it called stream.sendLocalReply) or
   * the stream is gone. A promise makes the chain wait (ext_authz, fault delay).
   */
  decodeHeaders?(stream: ActiveStream): boolean | Promise<boolean>;
  /** Response path, before headers go downstream: may edit `headers` (upstream or local reply alike). */
  encodeHeaders?(stream: ActiveStream, status: number, headers: Record<string, string | string[] | undefined>): void;
}

export interface FilterFactory {
  /** Type names (no type.googleapis.com/ prefix) of the filter's main config. */
  readonly configTypes: readonly string[];
  /** Type names accepted in typed_per_filter_config. */
  readonly perRouteTypes: readonly string[];
  /** Envoy's canonical filter name, for logs. */
  readonly canonicalName: string;
  create(name: string, config: J, ctx: FilterContext): HttpFilter;
  /** Validates and compiles a per-route config; throws ConfigError. */
  parsePerRoute?(config: J, where: string): unknown;
  /** True for the terminal filter (router). */
  readonly terminal?: boolean;
}
