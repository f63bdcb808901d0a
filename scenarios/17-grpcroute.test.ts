// Issue 12 item 4 (GRPCRoute) end to end on the lab: two gRPC echo backends (the echo image in GRPC_ECHO_SERVER mode,
// upstream's echo-basic GrpcEcho service) behind a Gateway's HTTP listener, reached by a @grpc/grpc-js client over
// h2c prior knowledge through the Gateway's load balancer address. A GRPCRoute's method matches send Echo to one
// Service and EchoTwo to the other; another GRPCRoute splits Echo 3:1 between them; a method no rule matches gets
// UNIMPLEMENTED and a rule whose Service does not exist UNAVAILABLE (Envoy's gRPC local replies). Statuses as the
// v1.6.1 spec defines them (Accepted, ResolvedRefs True / False BackendNotFound, the listener's supportedKinds
// listing GRPCRoute) and the proxy's config_dump: the method match as an exact path, the clusters speaking HTTP/2
// (HttpProtocolOptions http2_protocol_options), as Envoy Gateway configures them; explain on a served and a broken
// GRPCRoute.
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AdminSession, configDump, openProxyAdmin } from '../lab/toolkit/admin.ts';
import { waitFor } from '../lab/toolkit/wait.ts';
import { type EchoResponse, GRPC_ECHO_SERVICE, grpcEchoService } from '../system/echo/grpc.ts';
import { artifactNamespaces, endScenario } from './support/artifacts.ts';
import { gatewayAddress } from './support/gateway.ts';
import { uniqueName, useLab } from './support/lab.ts';
import { explainJson } from './support/tools.ts';

const GW_API = 'gateway.networking.k8s.io/v1';
const lab = useLab();
const ns = uniqueName('s17-grpc');
const PORT = 9700;
const methods = `grpc.s17.example.com`;
const split = `split.s17.example.com`;
const broken = `broken.s17.example.com`;
artifactNamespaces(ns);

const backend = (name: string, appProtocol: string) => `
apiVersion: v1
kind: Service
metadata: {name: ${name}, namespace: ${ns}}
spec:
  selector: {app: ${name}}
  ports: [{port: 8080, targetPort: 3000, protocol: TCP${appProtocol ? `, appProtocol: ${appProtocol}` : ''}}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: ${name}, namespace: ${ns}}
spec:
  selector: {matchLabels: {app: ${name}}}
  template:
    metadata: {labels: {app: ${name}}}
    spec:
      containers:
      - name: echo
        image: registry.k8s.io/gateway-api/echo-basic:v1.6.1
        env:
        - {name: GRPC_ECHO_SERVER, value: "1"}
        - {name: POD_NAME, valueFrom: {fieldRef: {fieldPath: metadata.name}}}
        - {name: NAMESPACE, valueFrom: {fieldRef: {fieldPath: metadata.namespace}}}
`;

const resources = `
apiVersion: v1
kind: Namespace
metadata: {name: ${ns}}
---
${backend('grpc-a', 'kubernetes.io/h2c')}
---
${backend('grpc-b', '')}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: ${ns}}
spec:
  gatewayClassName: gwvendor
  listeners: [{name: http, protocol: HTTP, port: ${PORT}}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: GRPCRoute
metadata: {name: methods, namespace: ${ns}}
spec:
  parentRefs: [{name: gw}]
  hostnames: [${methods}]
  rules:
  - matches: [{method: {service: ${GRPC_ECHO_SERVICE}, method: Echo}}]
    backendRefs: [{name: grpc-a, port: 8080}]
  - matches: [{method: {service: ${GRPC_ECHO_SERVICE}, method: EchoTwo}}]
    backendRefs: [{name: grpc-b, port: 8080}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: GRPCRoute
metadata: {name: split, namespace: ${ns}}
spec:
  parentRefs: [{name: gw}]
  hostnames: [${split}]
  rules:
  - backendRefs: [{name: grpc-a, port: 8080, weight: 3}, {name: grpc-b, port: 8080, weight: 1}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: GRPCRoute
metadata: {name: broken, namespace: ${ns}}
spec:
  parentRefs: [{name: gw}]
  hostnames: [${broken}]
  rules: [{backendRefs: [{name: missing, port: 8080}]}]
`;

interface Rpc {
  code: grpc.status;
  pod?: string;
  method?: string;
}

describe('GRPCRoute: a grpc-js client through the gateway to gRPC echo backends', () => {
  let address = '';
  let admin: AdminSession | undefined;
  const clients: grpc.Client[] = [];

  /** One unary RPC of GrpcEcho with `authority` as :authority; its status code, and the pod and method echoed. */
  function rpc(authority: string, method: 'Echo' | 'EchoTwo' | 'EchoThree'): Promise<Rpc> {
    const Client = grpcEchoService();
    const c = new Client(address, grpc.credentials.createInsecure(), { 'grpc.default_authority': authority });
    clients.push(c);
    return new Promise((resolve) => {
      (c as any)[method](
        {},
        new grpc.Metadata(),
        { deadline: Date.now() + 10_000 },
        (err: grpc.ServiceError | null, res: EchoResponse) => {
          c.close();
          resolve(
            err
              ? { code: err.code }
              : {
                  code: grpc.status.OK,
                  pod: res.assertions?.context.pod,
                  method: res.assertions?.fullyQualifiedMethod,
                },
          );
        },
      );
    });
  }

  beforeAll(async () => {
    await lab.kube.apply(resources);
    await Promise.all(['grpc-a', 'grpc-b'].map((d) => lab.kube.waitForRollout(d, ns, { timeoutMs: 90_000 })));
    await lab.kube.waitForCondition(GW_API, 'Gateway', 'gw', ns, 'Programmed', { timeoutMs: 90_000 });
    await lab.kube.waitForRollout('gw', ns, { timeoutMs: 90_000 });
    const lb = await gatewayAddress(lab.kube, ns, 'gw', PORT);
    address = `${lb.address}:${lb.port}`;
  });

  // biome-ignore lint/correctness/noEmptyPattern: vitest passes the suite second; the first argument must be a pattern.
  afterAll(async ({}, suite) => {
    await endScenario(
      lab,
      suite,
      [ns],
      () => {
        for (const c of clients) c.close();
      },
      () => admin?.close(),
    );
  });

  it('statuses: the GRPCRoutes accepted (one BackendNotFound), the listener carrying HTTPRoute and GRPCRoute', async () => {
    for (const name of ['methods', 'split']) {
      const r = await lab.kube.waitForCondition(GW_API, 'GRPCRoute', name, ns, 'ResolvedRefs', { timeoutMs: 60_000 });
      expect(r.status.parents[0].conditions.find((c: { type: string }) => c.type === 'Accepted')).toMatchObject({
        status: 'True',
        reason: 'Accepted',
      });
    }
    const b = await lab.kube.waitForCondition(GW_API, 'GRPCRoute', 'broken', ns, 'Accepted', { timeoutMs: 60_000 });
    expect(b.status.parents[0].conditions.find((c: { type: string }) => c.type === 'ResolvedRefs')).toMatchObject({
      status: 'False',
      reason: 'BackendNotFound',
    });
    const gw = await lab.kube.get(GW_API, 'Gateway', 'gw', ns);
    expect(gw?.status.listeners[0]).toMatchObject({
      name: 'http',
      attachedRoutes: 3,
      supportedKinds: [
        { group: 'gateway.networking.k8s.io', kind: 'HTTPRoute' },
        { group: 'gateway.networking.k8s.io', kind: 'GRPCRoute' },
      ],
    });
  });

  it('method matches: Echo to one Service, EchoTwo to the other, EchoThree (no rule) UNIMPLEMENTED', async () => {
    const echo = await waitFor('Echo through the gateway', async () => {
      const r = await rpc(methods, 'Echo');
      return { ok: r.code === grpc.status.OK, value: r, seen: r };
    });
    expect(echo.pod).toMatch(/^grpc-a-/);
    expect(echo.method).toBe(`/${GRPC_ECHO_SERVICE}/Echo`);
    const two = await rpc(methods, 'EchoTwo');
    expect(two).toMatchObject({ code: grpc.status.OK, method: `/${GRPC_ECHO_SERVICE}/EchoTwo` });
    expect(two.pod).toMatch(/^grpc-b-/);
    // The proxy's gRPC local reply for no route (HTTP 200, grpc-status 12), not a transport failure.
    expect((await rpc(methods, 'EchoThree')).code).toBe(grpc.status.UNIMPLEMENTED);
  });

  it('a rule whose Service does not exist answers UNAVAILABLE', async () => {
    const r = await waitFor('UNAVAILABLE from the broken route', async () => {
      const x = await rpc(broken, 'Echo');
      return { ok: x.code === grpc.status.UNAVAILABLE, value: x, seen: x };
    });
    // Answered by the proxy (its direct 503 as Envoy's gRPC local reply), not a connection that failed.
    expect(r.code).toBe(grpc.status.UNAVAILABLE);
    // The gateway itself is reachable (a transport failure would read UNAVAILABLE too): the other route answers.
    expect((await rpc(methods, 'Echo')).code).toBe(grpc.status.OK);
  });

  it('weights: 3:1 between the two Services', async () => {
    await waitFor('Echo through the split route', async () => {
      const r = await rpc(split, 'Echo');
      return { ok: r.code === grpc.status.OK, value: r, seen: r };
    });
    const seen = { a: 0, b: 0 };
    for (let i = 0; i < 200; i++) {
      const r = await rpc(split, 'Echo');
      expect(r.code).toBe(grpc.status.OK);
      if (r.pod?.startsWith('grpc-a-')) seen.a++;
      else if (r.pod?.startsWith('grpc-b-')) seen.b++;
    }
    // 75 % expected; 200 samples put the share within 0.6-0.9 but for odds of about one in a million (4.9 sd).
    expect(seen.a + seen.b).toBe(200);
    expect(seen.a / 200).toBeGreaterThan(0.6);
    expect(seen.a / 200).toBeLessThan(0.9);
  });

  it('invalid method matches: the CRD refuses an empty one; a regex RE2 refuses leaves the route not accepted', async () => {
    const invalid = (name: string, method: string) => `
apiVersion: gateway.networking.k8s.io/v1
kind: GRPCRoute
metadata: {name: ${name}, namespace: ${ns}}
spec:
  parentRefs: [{name: gw}]
  hostnames: [${name}.s17.example.com]
  rules: [{matches: [{method: ${method}}], backendRefs: [{name: grpc-a, port: 8080}]}]
`;
    // The v1.6.1 CRD's CEL rule on GRPCMethodMatch: refused at admission, nothing stored.
    await expect(lab.kube.apply(invalid('empty', '{type: Exact}'))).rejects.toThrow(
      /One or both of 'service' or 'method' must be specified/,
    );
    expect(await lab.kube.get(GW_API, 'GRPCRoute', 'empty', ns)).toBeUndefined();
    // Valid for the CRD (RegularExpression is not checked there), not for RE2: its only rule dropped.
    await lab.kube.apply(invalid('badregex', '{type: RegularExpression, service: "((", method: Echo}'));
    const r = await lab.kube.waitForCondition(GW_API, 'GRPCRoute', 'badregex', ns, 'Accepted', {
      status: 'False',
      timeoutMs: 60_000,
    });
    expect(r.status.parents[0].conditions.find((c: { type: string }) => c.type === 'Accepted')).toMatchObject({
      reason: 'UnsupportedValue',
      message: expect.stringContaining('invalid RE2 regex'),
    });
  });

  it("config_dump: the method match as an exact path, the backends' clusters speaking HTTP/2", async () => {
    admin = await openProxyAdmin(lab.kube, { namespace: ns, name: 'gw' });
    const dump = await configDump(admin);
    const routeConfigs: any[] = dump.configs
      .filter((c) => String(c['@type']).endsWith('RoutesConfigDump'))
      .flatMap((c) => (c.dynamic_route_configs ?? []).map((r: any) => r.route_config));
    const routes = routeConfigs.flatMap((rc) => (rc.virtual_hosts ?? []).flatMap((v: any) => v.routes ?? []));
    expect(routes.find((r) => r.name === `grpcroute/${ns}/methods/rule/0/match/0`)).toMatchObject({
      match: { path: `/${GRPC_ECHO_SERVICE}/Echo` },
      route: { cluster: `kube_${ns}_grpc-a_8080` },
    });
    const clusters: any[] = dump.configs
      .filter((c) => String(c['@type']).endsWith('ClustersConfigDump'))
      .flatMap((c) => (c.dynamic_active_clusters ?? []).map((x: any) => x.cluster));
    for (const name of [`kube_${ns}_grpc-a_8080`, `kube_${ns}_grpc-b_8080`]) {
      expect(clusters.find((c) => c.name === name)?.typed_extension_protocol_options).toMatchObject({
        'envoy.extensions.upstreams.http.v3.HttpProtocolOptions': {
          explicit_http_config: { http2_protocol_options: {} },
        },
      });
    }
  });
  it('explain: a served GRPCRoute is healthy (exit 0); the one with a missing Service says so (exit 1)', async () => {
    const ok = await explainJson(lab, 'grpcroute/methods', ns);
    expect(ok.code, ok.run.stdout).toBe(0);
    expect(ok.report.findings.map((f: { message: string }) => f.message)).toEqual(
      expect.arrayContaining([
        `accepted by Gateway ${ns}/gw`,
        'backends resolved',
        expect.stringMatching(/^in the proxy config of Gateway .*: 2 route\(s\) in config_dump of /),
      ]),
    );
    const bad = await explainJson(lab, 'grpcroute/broken', ns);
    expect(bad.code).toBe(1);
    expect(bad.report.findings).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          level: 'problem',
          message: expect.stringMatching(/^backends do not resolve: ResolvedRefs=False \(BackendNotFound\)/),
          details: ['an RPC matching such a rule gets gRPC status UNAVAILABLE (14) from the proxy'],
        }),
      ]),
    );
  });
});
