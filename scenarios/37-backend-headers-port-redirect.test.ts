// Issue 19 (GATEWAY-HTTP extended), two route mistakes users bring, each fixed:
// - HTTPRouteBackendRequestHeaderModification: a canary split between two Services where each backend must be told
//   which track it serves. With the RequestHeaderModifier on the rule, every request gets the same `x-track`
//   whichever Service it lands on; on each backendRef (filters of the backendRef, Envoy's request_headers_to_add on
//   the weighted cluster) each backend sees its own.
// - HTTPRoutePortRedirect / HTTPRouteParentRefPort: a listener on port 8080 (not the scheme's default) redirecting
//   /old to /new. The backend sees the Host as the client sent it (`s37.example.com:8080`), and the redirect keeps the
//   listener's port in Location (`http://s37.example.com:8080/new`), as upstream's tests require; a redirect that
//   names a port uses that one, and one to https drops it (the scheme's default, 443).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectHttpEventually, send } from '../lab/toolkit/http.ts';
import { artifactNamespaces, endScenario } from './support/artifacts.ts';
import { gatewayAddress, namespaceWithGateway, sampleBackend } from './support/gateway.ts';
import { uniqueName, useLab } from './support/lab.ts';

const GW_API = 'gateway.networking.k8s.io/v1';
const lab = useLab();
const ns = uniqueName('s37-backend-headers');
const host = 's37.example.com';
artifactNamespaces(ns);

/** Two more Services in front of the sample application: the stable and the canary track. */
const tracks = ['stable', 'canary']
  .map(
    (t) => `
apiVersion: v1
kind: Service
metadata: {name: ${t}, namespace: ${ns}}
spec:
  selector: {app: sampleapp}
  ports: [{name: http, port: 8000, targetPort: 8080}]`,
  )
  .join('\n---');

const header = (value: string) =>
  `[{type: RequestHeaderModifier, requestHeaderModifier: {set: [{name: x-track, value: ${value}}]}}]`;

function split(perBackend: boolean): string {
  return `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: split, namespace: ${ns}}
spec:
  parentRefs: [{name: gw}]
  hostnames: [${host}]
  rules:
  - matches: [{path: {type: PathPrefix, value: /headers}}]
${perBackend ? '' : `    filters: ${header('stable')}\n`}    backendRefs:
    - {name: stable, port: 8000, weight: 1${perBackend ? `, filters: ${header('stable')}` : ''}}
    - {name: canary, port: 8000, weight: 1${perBackend ? `, filters: ${header('canary')}` : ''}}
  - matches: [{path: {type: Exact, value: /old}}]
    filters: [{type: RequestRedirect, requestRedirect: {path: {type: ReplaceFullPath, replaceFullPath: /new}, statusCode: 302}}]
  - matches: [{path: {type: Exact, value: /secure}}]
    filters: [{type: RequestRedirect, requestRedirect: {scheme: https, statusCode: 301}}]
  - matches: [{path: {type: Exact, value: /moved}}]
    filters: [{type: RequestRedirect, requestRedirect: {port: 9090, statusCode: 302}}]
  - backendRefs: [{name: sampleapp, port: 8000}]
`;
}

describe('per-backend request headers and redirects on a non-default port', () => {
  let url: string;
  let port: number;

  /** x-track as each of `n` requests' backend saw it (the sample app echoes request headers). */
  async function tracksSeen(n: number): Promise<string[]> {
    const out: string[] = [];
    for (let i = 0; i < n; i++) {
      const r = await send({ url, path: '/headers', host });
      expect(r.status).toBe(200);
      const h = r.json.headers as Record<string, string[] | string>;
      const k = Object.keys(h).find((x) => x.toLowerCase() === 'x-track');
      out.push(k === undefined ? '' : String(h[k]));
    }
    return out;
  }

  beforeAll(async () => {
    await lab.kube.apply(namespaceWithGateway(ns));
    await lab.kube.apply(sampleBackend(ns));
    await lab.kube.apply(tracks);
    await lab.kube.apply(split(false));
    await lab.kube.waitForRollout('sampleapp', ns, { timeoutMs: 90_000 });
    await lab.kube.waitForCondition(GW_API, 'Gateway', 'gw', ns, 'Programmed', { timeoutMs: 90_000 });
    const lb = await gatewayAddress(lab.kube, ns, 'gw', 8080);
    url = `http://${lb.address}:${lb.port}`;
    port = lb.port;
    await expectHttpEventually({ url, path: '/headers', host }, { status: 200 });
  });

  // biome-ignore lint/correctness/noEmptyPattern: vitest passes the suite second; the first argument must be a pattern.
  afterAll(async ({}, suite) => {
    await endScenario(lab, suite, [ns]);
  });

  it('the mistake: the header on the rule tells every backend it is stable', async () => {
    expect(new Set(await tracksSeen(20))).toEqual(new Set(['stable']));
  });

  it('the fix: filters on each backendRef, each backend sees its own track', async () => {
    await lab.kube.apply(split(true));
    await expectHttpEventually(
      { url, path: '/headers', host },
      { check: (r) => (JSON.stringify(r.json?.headers).includes('canary') ? undefined : 'no canary yet') },
    );
    const seen = await tracksSeen(40);
    expect(new Set(seen)).toEqual(new Set(['stable', 'canary']));
    // Never both, never none: each request went to one backend and took that backend's header.
    expect(seen.every((t) => t === 'stable' || t === 'canary')).toBe(true);
  });

  it('the backend sees the Host with the listener port, as the client sent it', async () => {
    const r = await send({ url, path: '/get', host: `${host}:${port}` });
    expect(r.status).toBe(200);
    expect(r.json.headers.Host ?? r.json.headers.host).toEqual(expect.arrayContaining([`${host}:${port}`]));
  });

  it('a redirect on port 8080 keeps the port; one naming a port takes it; one to https drops it', async () => {
    const keep = await send({ url, path: '/old', host: `${host}:${port}` });
    expect(keep.status).toBe(302);
    expect(keep.headers.location).toBe(`http://${host}:${port}/new`);
    const named = await send({ url, path: '/moved', host: `${host}:${port}` });
    expect(named.status).toBe(302);
    expect(named.headers.location).toBe(`http://${host}:9090/moved`);
    const secure = await send({ url, path: '/secure', host: `${host}:${port}` });
    expect(secure.status).toBe(301);
    // The listener's 8080 is gone: the scheme's well-known port (Envoy's port_redirect 443 is written out, which the
    // spec allows; upstream's HTTPRouteRedirectPortAndScheme accepts either form).
    expect(secure.headers.location).toMatch(new RegExp(`^https://${host.replaceAll('.', '\\.')}(:443)?/secure$`));
  });
});
