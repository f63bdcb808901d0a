// TrafficPolicy `jwt` → JwtIR: per provider its JWKS, inline (checked as the proxy reads it: system/shared/jwks.ts) or
// from a Service (resolved as any backendRef, ReferenceGrant included; the proxy fetches it through that Service's
// cluster), its issuer, audiences and claims copied to headers. A bad JWKS or an unresolved Service is a Finding
// naming the field (`spec.jwt.providers[0].jwks.inline: Jwks is not in valid JSON format: ...`).
import { parseJwks } from '../../shared/jwks.ts';
import { VENDOR_GROUP } from '../model.ts';
import type { JwtSpec } from '../model-policy-fields.ts';
import { type RouteWorld, resolveServiceRef } from './backend-refs.ts';
import type { FieldReader } from './field-reader.ts';
import type { JwtIR, JwtProviderIR } from './types.ts';

/** How long the proxy waits for a remote JWKS (Envoy's http_uri.timeout is required; Envoy Gateway uses 10s). */
export const JWKS_FETCH_TIMEOUT = '10s';

export function jwtSettings(
  spec: JwtSpec,
  r: FieldReader,
  at: { namespace: string; policy: string; world?: RouteWorld },
): JwtIR | undefined {
  let bad = false;
  const names = new Set<string>();
  const providers = (spec.providers ?? []).map((p, i): JwtProviderIR | undefined => {
    const field = `spec.jwt.providers[${i}]`;
    if (names.has(p.name)) r.problem(`${field}.name`, `duplicate provider name ${JSON.stringify(p.name)}`);
    names.add(p.name);
    const jwks = jwksOf(p.jwks, `${field}.jwks`, r, at);
    if (!jwks) {
      bad = true;
      return undefined;
    }
    return {
      name: `${at.namespace}/${at.policy}/${p.name}`,
      ...(p.issuer ? { issuer: p.issuer } : {}),
      audiences: p.audiences ?? [],
      jwks,
      claimToHeaders: (p.claimToHeaders ?? []).map((c) => ({ claim: c.claim, header: c.header.toLowerCase() })),
      forward: p.forward === true,
    };
  });
  if (!providers.length) {
    r.problem('spec.jwt.providers', 'at least one provider is required');
    return undefined;
  }
  if (bad) return undefined;
  return { requirement: `${at.namespace}/${at.policy}`, providers: providers as JwtProviderIR[] };
}

function jwksOf(
  j: JwtSpec['providers'][number]['jwks'] | undefined,
  field: string,
  r: FieldReader,
  at: { namespace: string; policy: string; world?: RouteWorld },
): JwtProviderIR['jwks'] | undefined {
  if (!j || (j.inline === undefined) === (j.remote === undefined)) {
    r.problem(field, 'set exactly one of inline, remote');
    return undefined;
  }
  if (j.inline !== undefined) {
    const parsed = parseJwks(j.inline);
    if ('error' in parsed) {
      r.problem(`${field}.inline`, parsed.error);
      return undefined;
    }
    return { inline: j.inline };
  }
  const rem = j.remote!;
  const cacheDuration = rem.cacheDuration ? r.duration(`${field}.remote.cacheDuration`, rem.cacheDuration) : undefined;
  if (!at.world) return undefined;
  const res = resolveServiceRef(
    at.world,
    { group: VENDOR_GROUP, kind: 'TrafficPolicy', namespace: at.namespace },
    { name: rem.backendRef.name, namespace: rem.backendRef.namespace, port: rem.backendRef.port },
    `${field}.remote.backendRef`,
  );
  if (res.error || !res.cluster) {
    const f = `${field}.remote.backendRef`;
    r.problem(f, (res.error?.message ?? 'not resolved').replace(`${f}: `, ''));
    return undefined;
  }
  const c = res.cluster;
  const path = rem.path.startsWith('/') ? rem.path : `/${rem.path}`;
  return {
    remote: {
      uri: `http://${c.service}.${c.namespace}.svc.cluster.local:${c.port}${path}`,
      cluster: c,
      timeout: JWKS_FETCH_TIMEOUT,
      ...(cacheDuration ? { cacheDuration } : {}),
    },
  };
}
