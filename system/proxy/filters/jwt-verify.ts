// One JWT checked against one jwt_authn provider, in the order of Envoy's jwt_authn authenticator.cc and the
// statuses (their text) of jwt_verify_lib's status.cc: the token's form (three base64url sections, JSON header with
// an `alg`, JSON payload), the issuer, the time constraints (nbf, exp, with the provider's clock skew, 60 s by
// default), the audiences, then the JWKS (inline, or fetched from a cluster and cached) and the signature. The JWS
// verification and the JWK choice by kid/alg are the `jose` library's (compactVerify over createLocalJWKSet). Order
// and statuses checked against authenticator.cc (startVerify, verifyKey, handleGoodJwt). jose (46 modules) is loaded
// on the first verification, not with the proxy: most proxies never run a jwt_authn filter.
import type { createLocalJWKSet } from 'jose';
import { type JwksDoc, parseJwks } from '../../shared/jwks.ts';
import { ConfigError, durationMs } from '../config/errors.ts';
import type { Tags } from '../log.ts';
import { sendBuffered } from '../upstream/async-client.ts';
import type { ClusterManagerView } from '../upstream/cluster-manager-view.ts';
import type { J } from './filter-api.ts';

/** jwt_verify_lib's status strings (getStatusString), the ones this filter can produce. */
export const JwtStatus = {
  Ok: 'OK',
  Missed: 'Jwt is missing',
  BadFormat: 'Jwt is not in the form of Header.Payload.Signature with two dots and 3 sections',
  HeaderBadBase64: 'Jwt header is an invalid Base64url encoded',
  HeaderBadJson: 'Jwt header is an invalid JSON',
  HeaderBadAlg: 'Jwt header [alg] field is required and must be a string',
  PayloadBadBase64: 'Jwt payload is an invalid Base64url encoded',
  PayloadBadJson: 'Jwt payload is an invalid JSON',
  SignatureBadBase64: 'Jwt signature is an invalid Base64url encoded',
  UnknownIssuer: 'Jwt issuer is not configured',
  NotYetValid: 'Jwt not yet valid',
  Expired: 'Jwt is expired',
  AudienceNotAllowed: 'Audiences in Jwt are not allowed',
  KidAlgMismatch: "Jwks doesn't have key to match kid or alg from Jwt",
  FetchFailed: 'Jwks remote fetch is failed',
  VerificationFail: 'Jwt verification fails',
} as const;
export type JwtStatusText = (typeof JwtStatus)[keyof typeof JwtStatus];

export interface JwksStats {
  fetchSuccess(): void;
  fetchFailed(): void;
}

export interface Provider {
  name: string;
  issuer: string | undefined;
  audiences: string[];
  clockSkewS: number;
  forward: boolean;
  claimToHeaders: { header: string; claim: string }[];
  /** Where the token is read: headers (name, value prefix) and query parameters. */
  fromHeaders: { name: string; prefix: string }[];
  fromParams: string[];
  jwks(tags: Tags): Promise<JwksDoc | undefined>;
}

const B64URL = /^[A-Za-z0-9_-]*$/;

function section(s: string, bad: JwtStatusText, badJson: JwtStatusText): J | JwtStatusText {
  if (!B64URL.test(s)) return bad;
  try {
    const v = JSON.parse(Buffer.from(s, 'base64url').toString('utf8'));
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? v : badJson;
  } catch {
    return badJson;
  }
}

/** The token's form: its payload, or the status that refuses it. */
export function parseJwt(token: string): { header: J; payload: J } | JwtStatusText {
  const parts = token.split('.');
  if (parts.length !== 3) return JwtStatus.BadFormat;
  const header = section(parts[0]!, JwtStatus.HeaderBadBase64, JwtStatus.HeaderBadJson);
  if (typeof header === 'string') return header;
  if (typeof header.alg !== 'string') return JwtStatus.HeaderBadAlg;
  const payload = section(parts[1]!, JwtStatus.PayloadBadBase64, JwtStatus.PayloadBadJson);
  if (typeof payload === 'string') return payload;
  if (!B64URL.test(parts[2]!)) return JwtStatus.SignatureBadBase64;
  return { header, payload };
}

/** jose, once loaded (the first verification imports it). */
let joseModule: typeof import('jose') | undefined;

/** jose's key set of a JWKS document, made once per document (it imports each key once, on first use). */
const keySets = new WeakMap<JwksDoc, ReturnType<typeof createLocalJWKSet>>();
function keySet(jose: typeof import('jose'), jwks: JwksDoc): ReturnType<typeof createLocalJWKSet> {
  let set = keySets.get(jwks);
  if (!set) {
    set = jose.createLocalJWKSet(jwks as Parameters<typeof createLocalJWKSet>[0]);
    keySets.set(jwks, set);
  }
  return set;
}

/** Verifies `token` for provider `p`: Ok and the payload, or the first failed check's status. */
export async function verifyJwt(
  p: Provider,
  token: string,
  tags: Tags,
): Promise<{ status: JwtStatusText; payload?: J }> {
  const parsed = parseJwt(token);
  if (typeof parsed === 'string') return { status: parsed };
  const { payload } = parsed;
  if (p.issuer && payload.iss !== p.issuer) return { status: JwtStatus.UnknownIssuer };
  const now = Math.floor(Date.now() / 1000);
  if (typeof payload.nbf === 'number' && now + p.clockSkewS < payload.nbf) return { status: JwtStatus.NotYetValid };
  if (typeof payload.exp === 'number' && now > payload.exp + p.clockSkewS) return { status: JwtStatus.Expired };
  if (p.audiences.length) {
    const aud: unknown[] = Array.isArray(payload.aud) ? payload.aud : payload.aud === undefined ? [] : [payload.aud];
    if (!aud.some((a) => p.audiences.includes(String(a)))) return { status: JwtStatus.AudienceNotAllowed };
  }
  const jwks = await p.jwks(tags);
  if (!jwks) return { status: JwtStatus.FetchFailed };
  joseModule ??= await import('jose');
  const jose = joseModule;
  try {
    await jose.compactVerify(token, keySet(jose, jwks));
    return { status: JwtStatus.Ok, payload };
  } catch (err) {
    if (err instanceof jose.errors.JWKSNoMatchingKey) return { status: JwtStatus.KidAlgMismatch };
    return { status: JwtStatus.VerificationFail };
  }
}

/**
 * A claim's value as a header value, as Envoy's addJWTClaimToHeader: strings, numbers and booleans (a nested claim
 * by `a.b`); anything else (a list, an object) is not copied.
 */
export function claimValue(payload: J, claim: string): string | undefined {
  let v: unknown = payload;
  for (const k of claim.split('.')) v = v && typeof v === 'object' && !Array.isArray(v) ? (v as J)[k] : undefined;
  if (typeof v === 'string') return v || undefined;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return undefined;
}

/** A provider of the filter config (JwtProvider), its JWKS inline (checked now: a bad one is a NACK) or remote. */
export function compileProvider(
  name: string,
  c: J,
  where: string,
  clusters: ClusterManagerView,
  stats: JwksStats,
): Provider {
  const base = {
    name,
    issuer: c.issuer ? String(c.issuer) : undefined,
    audiences: ((c.audiences ?? []) as unknown[]).map(String),
    // authenticator.cc: a clock_skew_seconds of 0 (or unset) is the default, 60.
    clockSkewS: Number(c.clock_skew_seconds ?? 0) || 60,
    forward: c.forward === true,
    claimToHeaders: ((c.claim_to_headers ?? []) as J[]).map((h) => ({
      header: String(h.header_name).toLowerCase(),
      claim: String(h.claim_name),
    })),
    fromHeaders: ((c.from_headers ?? []) as J[]).map((h) => ({
      name: String(h.name).toLowerCase(),
      prefix: String(h.value_prefix ?? ''),
    })),
    fromParams: ((c.from_params ?? []) as unknown[]).map(String),
  };
  if (!c.from_headers && !c.from_params && !c.from_cookies) {
    base.fromHeaders = [{ name: 'authorization', prefix: 'Bearer ' }];
    base.fromParams = ['access_token'];
  }
  if (c.local_jwks) {
    const text =
      c.local_jwks.inline_string ??
      (c.local_jwks.inline_bytes ? Buffer.from(c.local_jwks.inline_bytes, 'base64').toString() : undefined);
    if (text === undefined)
      throw new ConfigError(`${where}.local_jwks: only inline_string and inline_bytes are supported`);
    const parsed = parseJwks(text);
    if ('error' in parsed) {
      throw new ConfigError(
        `Issuer '${base.issuer ?? ''}' in jwt_authn config has invalid local jwks: ${parsed.error}`,
      );
    }
    return { ...base, jwks: async () => parsed.jwks };
  }
  if (c.remote_jwks) return { ...base, jwks: remoteJwks(c.remote_jwks, `${where}.remote_jwks`, clusters, stats) };
  throw new ConfigError(`${where}: one of local_jwks, remote_jwks is required`);
}

/** remote_jwks: fetched through the named cluster when first needed, kept for cache_duration (600 s by default). */
function remoteJwks(r: J, where: string, clusters: ClusterManagerView, stats: JwksStats): Provider['jwks'] {
  const uri = r.http_uri as J | undefined;
  if (!uri?.uri || !uri.cluster) throw new ConfigError(`${where}.http_uri: uri and cluster are required`);
  const timeoutMs = durationMs(uri.timeout);
  if (timeoutMs === undefined) throw new ConfigError(`${where}.http_uri.timeout: value is required`);
  let url: URL;
  try {
    url = new URL(String(uri.uri));
  } catch {
    throw new ConfigError(`${where}.http_uri.uri: invalid URI ${String(uri.uri)}`);
  }
  const cacheMs = durationMs(r.cache_duration) ?? 600_000;
  let cached: { jwks: JwksDoc; until: number } | undefined;
  let inflight: Promise<JwksDoc | undefined> | undefined;
  const fetchOnce = async (tags: Tags): Promise<JwksDoc | undefined> => {
    const cluster = clusters.get(String(uri.cluster));
    if (!cluster) {
      stats.fetchFailed();
      return undefined;
    }
    try {
      const res = await sendBuffered(
        cluster,
        { method: 'GET', path: url.pathname + url.search, headers: { host: url.host } },
        timeoutMs,
        tags,
      );
      const parsed = res.status === 200 ? parseJwks(res.body.toString('utf8')) : undefined;
      if (!parsed || 'error' in parsed) {
        stats.fetchFailed();
        return undefined;
      }
      stats.fetchSuccess();
      cached = { jwks: parsed.jwks, until: performance.now() + cacheMs };
      return parsed.jwks;
    } catch {
      stats.fetchFailed();
      return undefined;
    }
  };
  return (tags) => {
    if (cached && cached.until > performance.now()) return Promise.resolve(cached.jwks);
    inflight ??= fetchOnce(tags).finally(() => {
      inflight = undefined;
    });
    return inflight;
  };
}
