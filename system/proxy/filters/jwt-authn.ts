// envoy.filters.http.jwt_authn: JWT authentication (Envoy's jwt_authn filter.cc and verifier.cc). Providers are
// compiled once (filters/jwt-verify.ts checks one token against one of them); requirements (provider_name,
// provider_and_audiences, requires_any, requires_all, allow_missing, allow_missing_or_failed) come from
// `requirement_map`, named by a route's PerRouteConfig.requirement_name (`disabled: true` turns the filter off
// there). A route without one is not checked (the filter's `rules`, which would match routes, are NACKed: the
// control plane never writes them). Refused: 401 (403 for an audience not allowed) with the status text as the
// body, `www-authenticate: Bearer realm="<original URI>"` (plus `, error="invalid_token"` unless the token was
// missing) and details `jwt_authn_access_denied{<status with _ for spaces>}`. Accepted: each provider's
// claim_to_headers added to the request, and the token's header removed unless `forward`. Stats
// `http.<prefix>.jwt_authn.allowed|denied|jwks_fetch_success|jwks_fetch_failed`.
import { ConfigError } from '../config/errors.ts';
import { DISABLED } from './disabled.ts';
import type { FilterFactory, FilterStream, J } from './filter-api.ts';
import { claimValue, compileProvider, JwtStatus, type JwtStatusText, type Provider, verifyJwt } from './jwt-verify.ts';

interface Verified {
  provider: Provider;
  payload: J;
  header?: string;
}
interface Result {
  status: JwtStatusText;
  verified: Verified[];
}
type Requirement = (s: FilterStream) => Promise<Result>;

const OK: JwtStatusText = JwtStatus.Ok;

/** The token of a request for a provider, and the header it came in (removed unless `forward`). */
function tokenFor(p: Provider, s: FilterStream): { token: string; header?: string } | undefined {
  for (const h of p.fromHeaders) {
    const v = s.header(h.name);
    if (v?.toLowerCase().startsWith(h.prefix.toLowerCase())) {
      const token = v.slice(h.prefix.length).trim();
      if (token) return { token, header: h.name };
    }
  }
  if (p.fromParams.length) {
    const q = s.path.indexOf('?');
    const params = new URLSearchParams(q < 0 ? '' : s.path.slice(q + 1));
    for (const name of p.fromParams) {
      const v = params.get(name);
      if (v) return { token: v };
    }
  }
  return undefined;
}

function providerRequirement(p: Provider, audiences?: string[]): Requirement {
  const provider = audiences?.length ? { ...p, audiences } : p;
  return async (s) => {
    const t = tokenFor(provider, s);
    if (!t) return { status: JwtStatus.Missed, verified: [] };
    const r = await verifyJwt(provider, t.token, s.tags);
    if (r.status !== OK) return { status: r.status, verified: [] };
    return { status: OK, verified: [{ provider, payload: r.payload!, ...(t.header ? { header: t.header } : {}) }] };
  };
}

function compileRequirement(r: J, where: string, providers: Map<string, Provider>): Requirement {
  const named = (n: unknown, at: string) => {
    const p = providers.get(String(n));
    if (!p) throw new ConfigError(`${at}: Required provider ['${String(n)}'] is not configured.`);
    return p;
  };
  if (r.provider_name !== undefined) return providerRequirement(named(r.provider_name, `${where}.provider_name`));
  if (r.provider_and_audiences) {
    const pa = r.provider_and_audiences as J;
    return providerRequirement(named(pa.provider_name, `${where}.provider_and_audiences`), pa.audiences ?? []);
  }
  if (r.requires_any || r.requires_all) {
    const any = r.requires_any !== undefined;
    const list = ((any ? r.requires_any : r.requires_all).requirements ?? []) as J[];
    const at = `${where}.${any ? 'requires_any' : 'requires_all'}.requirements`;
    if (list.length < 2) throw new ConfigError(`${at}: value must contain at least 2 item(s)`);
    const reqs = list.map((x, i) => compileRequirement(x, `${at}[${i}]`, providers));
    return async (s) => {
      const results = await Promise.all(reqs.map((q) => q(s)));
      const failed = results.filter((x) => x.status !== OK);
      if (any ? failed.length < results.length : failed.length === 0) {
        return { status: OK, verified: results.flatMap((x) => x.verified) };
      }
      // Envoy reports a missing token only when every requirement found none.
      return { status: (failed.find((x) => x.status !== JwtStatus.Missed) ?? failed[0]!).status, verified: [] };
    };
  }
  if (r.allow_missing) {
    return async (s) => {
      const results = await Promise.all([...providers.values()].map((p) => providerRequirement(p)(s)));
      const bad = results.find((x) => x.status !== OK && x.status !== JwtStatus.Missed);
      const good = results.filter((x) => x.status === OK);
      if (good.length) return { status: OK, verified: good.flatMap((x) => x.verified) };
      return bad ?? { status: OK, verified: [] };
    };
  }
  if (r.allow_missing_or_failed) {
    return async (s) => {
      const results = await Promise.all([...providers.values()].map((p) => providerRequirement(p)(s)));
      return { status: OK, verified: results.flatMap((x) => x.verified) };
    };
  }
  throw new ConfigError(`${where}: JwtRequirement has no requires_type`);
}

interface JwtConfig {
  requirements: Map<string, Requirement>;
}

function compileJwtAuthn(c: J, ctx: Parameters<FilterFactory['create']>[2]): JwtConfig {
  if (((c.rules ?? []) as J[]).length) {
    throw new ConfigError(
      'jwt_authn.rules: route matching rules are not supported (use requirement_map and a per-route requirement_name)',
    );
  }
  if (c.filter_state_rules) throw new ConfigError('jwt_authn.filter_state_rules: not supported');
  const p = `${ctx.statPrefix}jwt_authn.`;
  const stats = {
    fetchSuccess: () => ctx.stats.counter(`${p}jwks_fetch_success`).inc(),
    fetchFailed: () => ctx.stats.counter(`${p}jwks_fetch_failed`).inc(),
  };
  const providers = new Map<string, Provider>();
  for (const [name, pc] of Object.entries((c.providers ?? {}) as Record<string, J>)) {
    providers.set(name, compileProvider(name, pc, `jwt_authn.providers[${name}]`, ctx.clusters, stats));
  }
  const requirements = new Map<string, Requirement>();
  for (const [name, rc] of Object.entries((c.requirement_map ?? {}) as Record<string, J>)) {
    requirements.set(name, compileRequirement(rc, `jwt_authn.requirement_map[${name}]`, providers));
  }
  return { requirements };
}

/** Envoy's Http::Utility::buildOriginalUri: scheme, host and path (at most 256 characters of it). */
const originalUri = (s: FilterStream) =>
  `${s.header('x-forwarded-proto') ?? s.scheme}://${s.host}${s.path.slice(0, 256)}`;

export const jwtAuthnFactory: FilterFactory = {
  canonicalName: 'envoy.filters.http.jwt_authn',
  configTypes: ['envoy.extensions.filters.http.jwt_authn.v3.JwtAuthentication'],
  perRouteTypes: ['envoy.extensions.filters.http.jwt_authn.v3.PerRouteConfig'],
  parsePerRoute: (c, where) => {
    if (c.disabled === true) return DISABLED;
    if (!c.requirement_name) throw new ConfigError(`${where}: one of disabled, requirement_name is required`);
    return { requirementName: String(c.requirement_name) };
  },
  create(name, config, ctx) {
    const cfg = compileJwtAuthn(config, ctx);
    const allowed = ctx.stats.counter(`${ctx.statPrefix}jwt_authn.allowed`);
    const denied = ctx.stats.counter(`${ctx.statPrefix}jwt_authn.denied`);
    const log = ctx.logs.logger('jwt');
    const deny = (s: FilterStream, code: number, text: string, headers = {}) => {
      denied.inc();
      s.sendLocalReply(code, text, {
        details: `jwt_authn_access_denied{${text.replace(/\s/g, '_')}}`,
        headers,
        fromFilter: s.filterIndex,
      });
      return false;
    };
    return {
      name,
      async decodeHeaders(s) {
        const route = s.perFilterConfig<{ requirementName: string } | typeof DISABLED>(name);
        if (!route || route === DISABLED) return true;
        const req = cfg.requirements.get((route as { requirementName: string }).requirementName);
        if (!req) {
          const msg = `Wrong requirement_name: ${(route as { requirementName: string }).requirementName}. It should be one of [${[...cfg.requirements.keys()].join(',')}]`;
          return deny(s, 403, `Failed JWT authentication: ${msg}`);
        }
        const r = await req(s);
        if (s.done) return false;
        if (log.on('debug')) log.debug(`Jwt authentication completed with: ${r.status}`, s.tags);
        if (r.status !== OK) {
          const code = r.status === JwtStatus.AudienceNotAllowed ? 403 : 401;
          const realm = `Bearer realm="${originalUri(s)}"${r.status === JwtStatus.Missed ? '' : ', error="invalid_token"'}`;
          return deny(s, code, r.status, { 'www-authenticate': realm });
        }
        for (const v of r.verified) {
          if (v.header && !v.provider.forward) delete s.headers[v.header];
          for (const c of v.provider.claimToHeaders) {
            // Envoy adds the value (addCopy): a header the client sent keeps its value beside the claim's.
            const value = claimValue(v.payload, c.claim);
            const had = s.headers[c.header];
            if (value !== undefined) s.headers[c.header] = had === undefined ? value : [had, value].flat();
          }
        }
        allowed.inc();
        return true;
      },
    };
  },
};
