// Issue 19 (GATEWAY-HTTP extended) as a user meets two of its features, each as a realistic bug and its fix:
// - HTTPRouteRetry (GEP-1731, `rules[].retry`, experimental channel): a rule retrying 500s three times turns every
//   failing request into four upstream requests, a retry storm visible in the proxy's `/stats`
//   (cluster.<c>.upstream_rq_retry, _retry_limit_exceeded, upstream_rq_total) and in config_dump's `retry_policy`
//   (retry_on with retriable-status-codes, retriable_status_codes [500], num_retries 3, retry_back_off); retrying only 503s
//   (the backend's 500 is not transient) stops it: one upstream request per request, the counters stand still.
// - HTTPRouteCORS (GEP-1767, the `CORS` filter): a preflight from an origin the filter does not allow gets Envoy's
//   answer (200, no access-control-allow-origin: the browser then refuses the real request); allowing the origin
//   answers the preflight with it, the allowed methods and max age, and the real request carries it too.
// Sources: Gateway API v1.6.1 HTTPRouteRetry / HTTPCORSFilter, Envoy's router retry stats and cors_filter.cc.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AdminSession, configDump, findRoutes, openProxyAdmin } from '../lab/toolkit/admin.ts';
import { expectHttpEventually, send } from '../lab/toolkit/http.ts';
import { waitFor } from '../lab/toolkit/wait.ts';
import { artifactNamespaces, endScenario } from './support/artifacts.ts';
import { gatewayUrl, namespaceWithGateway, sampleBackend } from './support/gateway.ts';
import { uniqueName, useLab } from './support/lab.ts';

const GW_API = 'gateway.networking.k8s.io/v1';
const lab = useLab();
const ns = uniqueName('s34-retry-cors');
const host = 's34.example.com';
const cluster = `kube_${ns}_sampleapp_8000`;
const APP = 'https://app.s34.example.com';
const EVIL = 'https://evil.s34.example.com';
artifactNamespaces(ns);

function route(retryCodes: number[], origins: string[]): string {
  return `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web, namespace: ${ns}}
spec:
  parentRefs: [{name: gw}]
  hostnames: [${host}]
  rules:
  - name: flaky
    matches: [{path: {type: PathPrefix, value: /status}}]
    backendRefs: [{name: sampleapp, port: 8000}]
    retry: {codes: [${retryCodes.join(', ')}], attempts: 3, backoff: 10ms}
  - name: api
    matches: [{path: {type: PathPrefix, value: /}}]
    backendRefs: [{name: sampleapp, port: 8000}]
    filters:
    - type: CORS
      cors:
        allowOrigins: [${origins.map((o) => JSON.stringify(o)).join(', ')}]
        allowMethods: [GET, PUT]
        allowHeaders: [x-client]
        maxAge: 600
`;
}

describe('HTTPRoute retry and CORS: a retry storm and a refused preflight, each fixed', () => {
  let admin: AdminSession;
  let url: string;

  /** The cluster's counters in /stats (`cluster.<c>.<name>: <n>` lines). */
  async function clusterStats(): Promise<Record<string, number>> {
    const text = (await admin.get(`/stats?filter=^cluster\\.${cluster}\\.upstream_rq_`)).text;
    const out: Record<string, number> = {};
    for (const m of text.matchAll(/^cluster\.[^:]+\.(upstream_rq_[a-z0-9_]+): (\d+)$/gm)) out[m[1]] = Number(m[2]);
    return out;
  }

  /** config_dump's route of `path` for the host, once it satisfies `ok`. */
  async function dumpedRoute(path: string, ok: (r: any) => boolean): Promise<any> {
    return waitFor(`config_dump's route for ${host}${path}`, async () => {
      const hit = findRoutes(await configDump(admin), { host, path })[0];
      return { ok: !!hit && ok(hit.route), value: hit?.route, seen: hit?.route };
    });
  }

  beforeAll(async () => {
    await lab.kube.apply(namespaceWithGateway(ns));
    await lab.kube.apply(sampleBackend(ns));
    await lab.kube.apply(route([500], [APP.replace('app.', 'www.')]));
    await lab.kube.waitForRollout('sampleapp', ns, { timeoutMs: 90_000 });
    await lab.kube.waitForCondition(GW_API, 'Gateway', 'gw', ns, 'Programmed', { timeoutMs: 90_000 });
    url = await gatewayUrl(lab.kube, ns, 'gw', 8080);
    admin = await openProxyAdmin(lab.kube, { namespace: ns, name: 'gw' });
    await expectHttpEventually({ url, path: '/get', host }, { status: 200 });
  });

  // biome-ignore lint/correctness/noEmptyPattern: vitest passes the suite second; the first argument must be a pattern.
  afterAll(async ({}, suite) => {
    await endScenario(lab, suite, [ns], () => admin?.close());
  });

  it('retrying 500s three times: every failing request costs four upstream requests, counted in /stats', async () => {
    const r = await dumpedRoute('/status/500', (x) => x.route?.retry_policy !== undefined);
    // Envoy Gateway's retry_on for a route retry: the codes, and the connection failures a retry always covers.
    expect(r.route.retry_policy.retry_on.split(',')).toContain('retriable-status-codes');
    expect(r.route.retry_policy).toMatchObject({
      retriable_status_codes: [500],
      num_retries: 3,
      retry_back_off: { base_interval: '0.010s' },
    });
    const before = await clusterStats();
    for (let i = 0; i < 5; i++) expect((await send({ url, path: '/status/500', host })).status).toBe(500);
    const after = await clusterStats();
    const delta = (k: string) => (after[k] ?? 0) - (before[k] ?? 0);
    expect(delta('upstream_rq_total')).toBe(20);
    expect(delta('upstream_rq_retry')).toBe(15);
    expect(delta('upstream_rq_retry_limit_exceeded')).toBe(5);
  });

  it('retrying only 503s (a 500 is not transient): one upstream request per request, the storm stops', async () => {
    await lab.kube.apply(route([503], [APP.replace('app.', 'www.')]));
    await dumpedRoute('/status/500', (x) => x.route?.retry_policy?.retriable_status_codes?.[0] === 503);
    const before = await clusterStats();
    for (let i = 0; i < 5; i++) expect((await send({ url, path: '/status/500', host })).status).toBe(500);
    const after = await clusterStats();
    expect((after.upstream_rq_total ?? 0) - (before.upstream_rq_total ?? 0)).toBe(5);
    expect((after.upstream_rq_retry ?? 0) - (before.upstream_rq_retry ?? 0)).toBe(0);
  });

  const preflight = (origin: string) => ({
    url,
    path: '/anything',
    host,
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': 'PUT', 'access-control-request-headers': 'x-client' },
  });

  it('a preflight from an origin the CORS filter does not allow: 200 without access-control-allow-origin', async () => {
    const r = await expectHttpEventually(preflight(APP), {
      status: 200,
      headers: { 'access-control-allow-origin': null },
    });
    // Envoy's preflight answer lists the methods either way (cors_filter.cc): the missing origin is what the browser
    // refuses the real request for.
    expect(r.headers['access-control-allow-methods']).toBe('GET,PUT');
    // The allowed origin is answered: the filter is there, the origin is the bug.
    await expectHttpEventually(preflight(APP.replace('app.', 'www.')), {
      status: 200,
      headers: { 'access-control-allow-origin': APP.replace('app.', 'www.') },
    });
    expect((await send(preflight(EVIL))).headers['access-control-allow-origin']).toBeUndefined();
  });

  it('the origin allowed: the preflight names it with the methods and max age, the real request carries it', async () => {
    await lab.kube.apply(route([503], [APP.replace('app.', 'www.'), APP]));
    const r = await expectHttpEventually(preflight(APP), {
      status: 200,
      headers: { 'access-control-allow-origin': APP, 'access-control-max-age': '600' },
    });
    expect(r.headers['access-control-allow-methods']).toBe('GET,PUT');
    expect(r.headers['access-control-allow-headers']).toBe('x-client');
    const real = await send({ url, path: '/put', host, method: 'PUT', headers: { origin: APP }, body: '{}' });
    expect(real.status).toBe(200);
    expect(real.headers['access-control-allow-origin']).toBe(APP);
    expect((await send(preflight(EVIL))).headers['access-control-allow-origin']).toBeUndefined();
  });
});
