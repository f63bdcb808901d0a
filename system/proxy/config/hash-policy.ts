// A route's hash_policy (envoy/config/route/v3/route_components.proto RouteAction.HashPolicy, Envoy's
// HashPolicyImpl in source/common/http/hash_policy.cc): the request hash consistent-hash clusters (RING_HASH,
// MAGLEV) pick a host by. Each policy that yields a value is combined into the hash as Envoy does (rotate left by
// one, xor); a `terminal` policy that yields one stops the list; none yielding one leaves the request without a
// hash (the load balancer then picks at random). Implemented: `header` (several values joined with ','),
// `connection_properties.source_ip`, `query_parameter`; `cookie` and `filter_state` are refused.
import { createHash } from 'node:crypto';
import { ConfigError } from './errors.ts';

type J = Record<string, any>;

/** The 64-bit hash of a key: SHA-256's first 64 bits (Envoy uses xxHash64; only stickiness matters here). */
export function hash64(key: string): bigint {
  return createHash('sha256').update(key).digest().readBigUInt64BE(0);
}

export type HashPolicy =
  | { kind: 'header'; name: string; terminal: boolean }
  | { kind: 'source_ip'; terminal: boolean }
  | { kind: 'query'; name: string; terminal: boolean };

export function compileHashPolicies(list: J[] | undefined, where: string): HashPolicy[] | undefined {
  if (!list || list.length === 0) return undefined;
  return list.map((p, i) => {
    const here = `${where}.hash_policy[${i}]`;
    const terminal = p.terminal === true;
    if (p.header) {
      if (p.header.regex_rewrite) throw new ConfigError(`${here}.header.regex_rewrite is not supported`);
      return { kind: 'header', name: String(p.header.header_name).toLowerCase(), terminal };
    }
    if (p.connection_properties) return { kind: 'source_ip', terminal };
    if (p.query_parameter) return { kind: 'query', name: String(p.query_parameter.name), terminal };
    if (p.cookie) throw new ConfigError(`${here}.cookie: cookie hash policies are not supported`);
    if (p.filter_state) throw new ConfigError(`${here}.filter_state: filter state hash policies are not supported`);
    throw new ConfigError(`${here}: value is required (one of header, connection_properties, query_parameter)`);
  });
}

/** What a hash policy reads of a request. */
export interface HashInput {
  header(name: string): string | undefined;
  /** The downstream peer, `ip:port` (Envoy hashes the address without the port). */
  remote: string;
  path: string;
}

function sourceIp(remote: string): string {
  const i = remote.lastIndexOf(':');
  const ip = i > 0 ? remote.slice(0, i) : remote;
  return ip.startsWith('[') ? ip.slice(1, -1) : ip;
}

/** The request's hash, or undefined when no policy yields a value. */
export function requestHash(policies: HashPolicy[], r: HashInput): bigint | undefined {
  let hash: bigint | undefined;
  for (const p of policies) {
    let v: string | undefined;
    if (p.kind === 'header') v = r.header(p.name);
    else if (p.kind === 'source_ip') v = r.remote ? sourceIp(r.remote) : undefined;
    else {
      const q = r.path.indexOf('?');
      if (q >= 0) v = new URLSearchParams(r.path.slice(q + 1)).get(p.name) ?? undefined;
    }
    if (v === undefined) continue;
    const h = hash64(v);
    hash = hash === undefined ? h : BigInt.asUintN(64, (hash << 1n) | (hash >> 63n)) ^ h;
    if (p.terminal) break;
  }
  return hash;
}
