// Issue 13 item 4, scenario "a JWT policy rejecting an expired token (401) then a valid one (200)": an app team puts a
// TrafficPolicy `jwt` (issuer, audience, an inline JWKS made here with node:crypto, `sub` copied to x-user) on its
// HTTPRoute. A client with an expired token gets Envoy's jwt_authn answer — 401 `Jwt is expired`, www-authenticate
// with error="invalid_token", response details jwt_authn_access_denied{Jwt_is_expired} — and with a fresh token gets
// through (200, the backend sees x-user and no Authorization). config_dump names the policy as the route's jwt
// provenance. Then the classic mistake: a JWKS pasted badly. The policy is refused (Accepted=False naming
// spec.jwt.providers[0].jwks.inline), explain names the cause, the proxy stays ready; fixed, it is enforced again.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AdminSession, configDump, findRoutes, openProxyAdmin } from '../lab/toolkit/admin.ts';
import { expectHttpEventually, type HttpResponse } from '../lab/toolkit/http.ts';
import { testSigner } from '../system/proxy/testing/jwt.ts';
import { artifactNamespaces, collectSuiteFailure } from './support/artifacts.ts';
import { gatewayUrl, gatewayWithRoute, sampleBackend } from './support/gateway.ts';
import { uniqueName, useLab } from './support/lab.ts';
import { explainJson } from './support/tools.ts';

const GW_API = 'gateway.networking.k8s.io/v1';
const VENDOR = 'gateway.gwvendor.dev/v1alpha1';
const lab = useLab();
const ns = uniqueName('s29-jwt');
const host = 's29.example.com';
const ISSUER = 'https://idp.s29.example.com';
artifactNamespaces(ns);

const signer = testSigner('s29-key');
const now = () => Math.floor(Date.now() / 1000);
const token = (exp: number) => signer.token({ iss: ISSUER, aud: 'orders', sub: 'alice', exp });

const policy = (jwks: string) => `
apiVersion: gateway.gwvendor.dev/v1alpha1
kind: TrafficPolicy
metadata: {name: require-jwt, namespace: ${ns}}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: web}]
  jwt:
    providers:
      - name: corp
        issuer: ${ISSUER}
        audiences: [orders]
        jwks: {inline: '${jwks}'}
        claimToHeaders: [{claim: sub, header: x-user}]
`;

const seen = (res: HttpResponse, name: string): string | undefined => {
  const h = res.json?.headers ?? {};
  const k = Object.keys(h).find((x) => x.toLowerCase() === name);
  return k === undefined ? undefined : [h[k]].flat().join(',');
};

describe('jwt: an expired token is refused (401), a valid one gets through', () => {
  let admin: AdminSession;
  let url: string;
  const req = (headers: Record<string, string> = {}) => ({ url, path: '/headers', host, headers });

  beforeAll(async () => {
    await lab.kube.apply(gatewayWithRoute(ns, host));
    await lab.kube.apply(sampleBackend(ns));
    await lab.kube.apply(policy(signer.jwks));
    await lab.kube.waitForCondition(GW_API, 'Gateway', 'gw', ns, 'Programmed', { timeoutMs: 60_000 });
    url = await gatewayUrl(lab.kube, ns, 'gw', 8080);
    admin = await openProxyAdmin(lab.kube, { namespace: ns, name: 'gw' });
  });

  // biome-ignore lint/correctness/noEmptyPattern: vitest passes the suite second; the first argument must be a pattern.
  afterAll(async ({}, suite) => {
    await collectSuiteFailure(suite);
    await admin?.close();
    if (process.env.KEEP !== '1') await lab.k(['delete', 'namespace', ns, '--wait=false']).catch(() => undefined);
  });

  it('no token, then an expired one: 401 with Envoy’s jwt_authn body, www-authenticate and details', async () => {
    await expectHttpEventually(req(), { status: 401, body: 'Jwt is missing' });
    const expired = await expectHttpEventually(req({ authorization: `Bearer ${token(now() - 3600)}` }), {
      status: 401,
      body: 'Jwt is expired',
      headers: { 'www-authenticate': `Bearer realm="http://${host}/headers", error="invalid_token"` },
    });
    expect(expired.headers['content-type']).toBe('text/plain');
    const hits = findRoutes(await configDump(admin), { host, path: '/headers' });
    expect(hits.map((h) => h.provenance.jwt)).toEqual([`TrafficPolicy/${ns}/require-jwt`]);
    expect(JSON.stringify(hits[0]!.route.typed_per_filter_config)).toContain(`"requirement_name":"${ns}/require-jwt"`);
  });

  it('a valid token: 200, the backend sees the sub claim as x-user and no Authorization header', async () => {
    const ok = await expectHttpEventually(req({ authorization: `Bearer ${token(now() + 600)}` }), {
      status: 200,
      check: (r) => (seen(r, 'x-user') === 'alice' ? undefined : `x-user=${seen(r, 'x-user')}`),
    });
    expect(seen(ok, 'authorization')).toBeUndefined();
    const stats = await admin.get('/stats?filter=jwt_authn');
    expect(stats.text).toMatch(/jwt_authn\.allowed: [1-9]/);
    expect(stats.text).toMatch(/jwt_authn\.denied: [1-9]/);
  });

  it('a badly pasted JWKS: Accepted=False naming the field, explain names it, the last good config keeps serving', async () => {
    await lab.kube.apply(policy('{"keys": [{"kty": "RSA"'));
    const p = await lab.kube.waitForCondition(VENDOR, 'TrafficPolicy', 'require-jwt', ns, 'Accepted', {
      status: 'False',
      reason: 'Invalid',
    });
    const accepted = p.status.conditions.find((c: any) => c.type === 'Accepted');
    expect(accepted.message).toContain('spec.jwt.providers[0].jwks.inline: Jwks is not in valid JSON format');
    const { report, run } = await explainJson(lab, 'httproute/web', ns);
    expect(JSON.stringify(report.findings), run.stdout).toContain('spec.jwt.providers[0].jwks.inline');
    expect((await admin.get('/ready')).status).toBe(200);
    // Fixed: the policy is accepted again and enforced.
    await lab.kube.apply(policy(signer.jwks));
    await lab.kube.waitForCondition(VENDOR, 'TrafficPolicy', 'require-jwt', ns, 'Accepted', { status: 'True' });
    await expectHttpEventually(req(), { status: 401, body: 'Jwt is missing' });
    await expectHttpEventually(req({ authorization: `Bearer ${token(now() + 600)}` }), { status: 200 });
  });
});
