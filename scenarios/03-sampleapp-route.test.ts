// Contract 4.5 (sample application) and 4.4 (traffic through a gateway proxy): the sample application runs in
// namespace sampleapp; an HTTPRoute there with one hostname points at Service sampleapp port 8000 through a Gateway in
// gwvendor-system with a port-80 listener. The address is read from the Gateway's Service
// (status.loadBalancer.ingress[0]); `GET /headers` with the route's Host answers 200 with the JSON shape and the
// response headers of 4.4, on the load balancer address and through a port-forward of local 8080 to port 80.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectHttpEventually, type HttpResponse, send } from '../lab/toolkit/http.ts';
import { type PortForward, portForward } from '../lab/toolkit/portforward.ts';
import { artifactNamespaces, collectSuiteFailure } from './support/artifacts.ts';
import { type GatewayAddress, gatewayAddress } from './support/gateway.ts';
import { tryHoldContractPorts } from './support/host-ports.ts';
import { uniqueName, useLab } from './support/lab.ts';

const GW_API = 'gateway.networking.k8s.io/v1';
const GW_NS = 'gwvendor-system';
const APP_NS = 'sampleapp';
const lab = useLab();
const gw = uniqueName('s03-gw');
const route = uniqueName('s03-route');
const host = `${route}.example.com`;
/** A request header that the body must echo back. */
const SENT = { 'x-scenario': 's03' };
artifactNamespaces(GW_NS, APP_NS);

const resources = `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: ${gw}, namespace: ${GW_NS}}
spec:
  gatewayClassName: gwvendor
  listeners: [{name: http, protocol: HTTP, port: 80, allowedRoutes: {namespaces: {from: All}}}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: ${route}, namespace: ${APP_NS}}
spec:
  parentRefs: [{name: ${gw}, namespace: ${GW_NS}}]
  hostnames: [${host}]
  rules: [{backendRefs: [{name: sampleapp, port: 8000}]}]
`;

/** A header's values in the body of `GET /headers`, whatever the case of its name. */
function headerValues(headers: Record<string, unknown>, name: string): string[] | undefined {
  const k = Object.keys(headers).find((x) => x.toLowerCase() === name);
  return k === undefined ? undefined : (headers[k] as string[]);
}

/** Every check of contract 4.4 on a `GET /headers` answer; returns the mismatches (empty when it conforms). */
function contract44(res: HttpResponse, sentHost: string): string[] {
  const bad: string[] = [];
  const h = res.headers;
  if (res.status !== 200) bad.push(`status ${res.status}`);
  if (h['access-control-allow-credentials'] === undefined) bad.push('no access-control-allow-credentials');
  if (h['access-control-allow-origin'] === undefined) bad.push('no access-control-allow-origin');
  if (!/^application\/json/.test(h['content-type'] ?? '')) bad.push(`content-type ${h['content-type']}`);
  if (Number.isNaN(Date.parse(h.date ?? ''))) bad.push(`date ${h.date}`);
  if (h['content-length'] !== String(Buffer.byteLength(res.body))) bad.push(`content-length ${h['content-length']}`);
  if (!/^\d+$/.test(h['x-envoy-upstream-service-time'] ?? '')) {
    bad.push(`x-envoy-upstream-service-time ${h['x-envoy-upstream-service-time']}`);
  }
  if (h.server !== 'envoy') bad.push(`server ${h.server}`);
  const headers = res.json?.headers;
  if (!headers || typeof headers !== 'object' || Array.isArray(headers)) bad.push('body has no object "headers"');
  else {
    for (const [k, v] of Object.entries(headers)) {
      if (!Array.isArray(v) || !v.every((x) => typeof x === 'string')) bad.push(`headers.${k} is not string[]`);
    }
    // The route configuration ignores a Host's port when picking the virtual host (ignore_port_in_host_matching) and
    // the upstream sees the Host as sent, port included, as Gateway API conformance requires.
    const want = sentHost;
    const got = headerValues(headers, 'host');
    if (got?.[0] !== want) bad.push(`headers.Host ${JSON.stringify(got)}, want [${want}]`);
    if (headerValues(headers, 'x-scenario')?.[0] !== 's03') bad.push('headers.X-Scenario is not [s03]');
  }
  return bad;
}

describe('sample application route (contract 4.5)', () => {
  let lb: GatewayAddress;
  let fwd: PortForward | undefined;

  beforeAll(async () => {
    // 4.5 steps 1-2: the sample application is installed by the lab (--with-sampleapp) and its pods run.
    await lab.kube.waitForRollout('sampleapp', APP_NS, { timeoutMs: 60_000 });
    await lab.kube.apply(resources);
    await lab.kube.waitForCondition(GW_API, 'Gateway', gw, GW_NS, 'Programmed', { timeoutMs: 60_000 });
  });

  // biome-ignore lint/correctness/noEmptyPattern: vitest passes the suite second; the first argument must be a pattern.
  afterAll(async ({}, suite) => {
    await collectSuiteFailure(suite);
    await fwd?.close();
    if (process.env.KEEP !== '1') await lab.kube.delete(resources, { wait: true }).catch(() => undefined);
  });

  it('the sample application runs in namespace sampleapp behind Service sampleapp:8000', async () => {
    const pods = await lab.kube.list('v1', 'Pod', APP_NS, 'app=sampleapp');
    expect(pods.filter((p) => p.status?.phase === 'Running').length).toBeGreaterThan(0);
    const svc = await lab.kube.get('v1', 'Service', 'sampleapp', APP_NS);
    expect(svc?.spec.ports.map((p: any) => p.port)).toContain(8000);
  });

  it('the route is accepted and its refs resolve', async () => {
    const r = await lab.kube.waitForCondition(GW_API, 'HTTPRoute', route, APP_NS, 'ResolvedRefs');
    const parent = r.status.parents.find((p: any) => p.parentRef.name === gw);
    expect(parent.parentRef.namespace).toBe(GW_NS);
    expect(parent.conditions.find((c: any) => c.type === 'Accepted')?.status).toBe('True');
  });

  it('the gateway Service is a load balancer with an address in status.loadBalancer.ingress[0]', async () => {
    lb = await gatewayAddress(lab.kube, GW_NS, gw, 80);
    expect(lb.svc.spec.type).toBe('LoadBalancer');
    // Port 80 as written, named after the listener port, to the same port on the proxy (interfaces page).
    expect(lb.svc.spec.ports).toContainEqual(
      expect.objectContaining({ name: 'listener-80', port: 80, targetPort: 80 }),
    );
    // What the contract's kubectl operation reads.
    const ip = await lab.k(['get', 'svc', gw, '-n', GW_NS, '-o', 'jsonpath={.status.loadBalancer.ingress[0].ip}']);
    const hostname = await lab.k([
      'get',
      'svc',
      gw,
      '-n',
      GW_NS,
      '-o',
      'jsonpath={.status.loadBalancer.ingress[0].hostname}',
    ]);
    expect(ip || hostname).toBe(lb.address);
  });

  it('GET /headers with the Host header → 200, the JSON body and the response headers of 4.4', async () => {
    const url = `http://${lb.address}:${lb.port}`;
    // A load balancer can need a few seconds after creation (4.4): eventual consistency, then the exact checks.
    const res = await expectHttpEventually(
      { url, path: '/headers', host, headers: SENT },
      { status: 200, check: (r) => contract44(r, host).join('; ') || undefined },
    );
    expect(contract44(res, host)).toEqual([]);
    // With the load balancer's port appended (4.4: `Host: <hostname>:<port>`) the route matches too.
    const withPort = `${host}:${lb.port}`;
    const res2 = await send({ url, path: '/headers', host: withPort, headers: SENT });
    expect(contract44(res2, withPort)).toEqual([]);
    // A Host that is not in the route has no virtual host: Envoy's 404 with an empty body.
    const other = await send({ url, path: '/headers', host: `not-${host}` });
    expect([other.status, other.body]).toEqual([404, '']);
  });

  it('the same request works through a port-forward of local 8080 to the gateway port 80', async () => {
    const target = { namespace: GW_NS, labelSelector: `app.orch.io/name=${gw}`, port: 80 };
    // Local 8080 as in the contract; another forward on this machine may hold it (91 forwards the contract's ports
    // while files run side by side: support/host-ports.ts), then any free port shows the same.
    const release = await tryHoldContractPorts();
    try {
      fwd = release
        ? await portForward(lab.kube.kc, { ...target, localPort: 8080 }).catch((err: NodeJS.ErrnoException) => {
            if (err.code !== 'EADDRINUSE') throw err;
            return portForward(lab.kube.kc, target);
          })
        : await portForward(lab.kube.kc, target);
      expect(fwd.pod).toMatch(new RegExp(`^${gw}-`));
      const res = await expectHttpEventually(
        { url: fwd.url, path: '/headers', host, headers: SENT },
        { status: 200, check: (r) => contract44(r, host).join('; ') || undefined },
      );
      expect(contract44(res, host)).toEqual([]);
      const withPort = `${host}:${fwd.localPort}`;
      expect(
        contract44(await send({ url: fwd.url, path: '/headers', host: withPort, headers: SENT }), withPort),
      ).toEqual([]);
    } finally {
      await fwd?.close();
      fwd = undefined;
      await release?.();
    }
  });
});
