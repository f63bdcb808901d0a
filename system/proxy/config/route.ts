// A compiled route as the data path reads it: what matched (MatchSpec), the action (forward to a cluster,
// redirect, direct response) with its rewrites, timeouts, retry policy and mirrors, the header mutations in the
// order they apply, and the per-filter configs; route-table.ts compiles RouteConfigurations into these.

import type { Re2 } from '../../shared/regex.ts';
import type { HashPolicy } from './hash-policy.ts';
import type { HeaderMutation } from './headers.ts';
import type { HeaderGetter } from './matchers.ts';
import type { RateLimitEntry } from './rate-limits.ts';

export interface MatchInput {
  /** :path without the query string. */
  path: string;
  /** The raw query string after '?', or ''. */
  query: string;
  header: HeaderGetter;
}

export interface RetryPolicy {
  retryOn: Set<string>;
  numRetries: number;
  perTryTimeoutMs: number;
  retriableStatusCodes: Set<number>;
  baseIntervalMs: number;
  maxIntervalMs: number;
}

export interface WeightedCluster {
  name: string;
  weight: number;
  requestMutation: HeaderMutation;
  responseMutation: HeaderMutation;
  perFilter: Map<string, unknown>;
  hostRewriteLiteral?: string;
}

export interface RouteActionConfig {
  kind: 'route';
  cluster?: string;
  clusterHeader?: string;
  weighted?: { clusters: WeightedCluster[]; total: number };
  notFoundCode: number;
  prefixRewrite?: string;
  regexRewrite?: { re: Re2; sub: string };
  hostRewriteLiteral?: string;
  autoHostRewrite: boolean;
  hostRewriteHeader?: string;
  hostRewritePathRegex?: { re: Re2; sub: string };
  /** 0 disables the timeout. */
  timeoutMs: number;
  retry?: RetryPolicy;
  mirrors: Array<{ cluster: string; fraction: number }>;
  includeAttemptCount: boolean;
  includeAttemptCountInResponse: boolean;
  /** RouteAction.upgrade_configs (http/upgrade.ts): upgrade type → enabled; undefined when the route has none. */
  upgrades?: Map<string, boolean>;
  /** RouteAction.idle_timeout (overrides the HCM's stream_idle_timeout; 0 disables); undefined when not set. */
  idleTimeoutMs?: number;
  /** RouteAction.rate_limits (rate-limits.ts), for the ratelimit filter; undefined when the route has none. */
  rateLimits?: RateLimitEntry[];
  /** RouteAction.hash_policy (hash-policy.ts): the request hash of RING_HASH/MAGLEV clusters. */
  hashPolicy?: HashPolicy[];
}

export interface RedirectConfig {
  kind: 'redirect';
  scheme?: string;
  host?: string;
  port?: number;
  pathRedirect?: string;
  prefixRewrite?: string;
  regexRewrite?: { re: Re2; sub: string };
  code: number;
  stripQuery: boolean;
}

export interface DirectResponseConfig {
  kind: 'direct';
  status: number;
  body?: Buffer;
}

export type Action = RouteActionConfig | RedirectConfig | DirectResponseConfig;

export interface MatchSpec {
  kind: 'prefix' | 'path' | 'regex' | 'path_separated_prefix';
  value: string;
  caseSensitive: boolean;
}

export interface CompiledRoute {
  name: string;
  spec: MatchSpec;
  matches(input: MatchInput): boolean;
  action: Action;
  /** Request mutations in the order they apply (route, vhost, route config, or reversed). */
  requestMutations: HeaderMutation[];
  responseMutations: HeaderMutation[];
  /** Per-filter configs, most specific first merged (route > vhost > route config). */
  perFilter: Map<string, unknown>;
  vhost: VirtualHost;
}

export interface VirtualHost {
  name: string;
  domains: string[];
  routes: CompiledRoute[];
}
