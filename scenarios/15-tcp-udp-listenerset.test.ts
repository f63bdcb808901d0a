// Issue 18 item 6 end to end on the lab: a Gateway with a TCP listener (TCPRoute to the sample application's TCP
// echo), a UDP listener (UDPRoute to its UDP echo) and a ListenerSet adding an HTTP listener (an HTTPRoute attached to
// the ListenerSet by parentRef kind ListenerSet). Through the Gateway's LoadBalancer address: TCP bytes both ways with
// the client's half-close passed on, a UDP round trip, an HTTP request on the ListenerSet's port. The statuses the
// v1.6.1 spec defines (routes Accepted/ResolvedRefs, the ListenerSet's Accepted/Programmed and listeners, the
// Gateway's status.attachedListenerSets), the proxy's config_dump (tcp_proxy, udp_proxy listeners) and its
// tcp.* / udp.* stats in Envoy's names.
import dgram from 'node:dgram';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AdminSession, configDump, openProxyAdmin } from '../lab/toolkit/admin.ts';
import { expectHttpEventually } from '../lab/toolkit/http.ts';
import { waitFor } from '../lab/toolkit/wait.ts';
import { artifactNamespaces, endScenario } from './support/artifacts.ts';
import { gatewayAddress } from './support/gateway.ts';
import { uniqueName, useLab } from './support/lab.ts';
import { explainJson } from './support/tools.ts';

const GW_API = 'gateway.networking.k8s.io/v1';
const lab = useLab();
const ns = uniqueName('s15-l4');
const host = 'ls.s15.example.com';
const TCP_PORT = 9400;
const UDP_PORT = 9401;
const LS_PORT = 9402;
artifactNamespaces(ns);

const resources = `
apiVersion: v1
kind: Namespace
metadata: {name: ${ns}}
---
apiVersion: v1
kind: Service
metadata: {name: echo, namespace: ${ns}}
spec:
  selector: {app: echo}
  ports:
  - {name: http, port: 8000, targetPort: 8080, protocol: TCP}
  - {name: tcp-echo, port: 9000, targetPort: 9000, protocol: TCP}
  - {name: udp-echo, port: 9001, targetPort: 9001, protocol: UDP}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: echo, namespace: ${ns}}
spec:
  selector: {matchLabels: {app: echo}}
  template:
    metadata: {labels: {app: echo}}
    spec:
      containers:
      - name: echo
        image: gwlab.local/system:0.1.0
        args: [sampleapp, --tcp-echo-port, "9000", --udp-echo-port, "9001"]
        env: [{name: POD_NAME, valueFrom: {fieldRef: {fieldPath: metadata.name}}}]
        ports:
        - {name: http, containerPort: 8080, protocol: TCP}
        - {name: tcp-echo, containerPort: 9000, protocol: TCP}
        - {name: udp-echo, containerPort: 9001, protocol: UDP}
        readinessProbe: {httpGet: {path: /status/200, port: 8080}, periodSeconds: 1}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: ${ns}}
spec:
  gatewayClassName: gwvendor
  allowedListeners: {namespaces: {from: Same}}
  listeners:
  - {name: tcp, protocol: TCP, port: ${TCP_PORT}}
  - {name: udp, protocol: UDP, port: ${UDP_PORT}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: TCPRoute
metadata: {name: tcp, namespace: ${ns}}
spec:
  parentRefs: [{name: gw, sectionName: tcp}]
  rules: [{backendRefs: [{name: echo, port: 9000}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: UDPRoute
metadata: {name: udp, namespace: ${ns}}
spec:
  parentRefs: [{name: gw, sectionName: udp}]
  rules: [{backendRefs: [{name: echo, port: 9001}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: ListenerSet
metadata: {name: extra, namespace: ${ns}}
spec:
  parentRef: {name: gw}
  listeners: [{name: http, protocol: HTTP, port: ${LS_PORT}}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web, namespace: ${ns}}
spec:
  parentRefs: [{kind: ListenerSet, name: extra, sectionName: http}]
  hostnames: [${host}]
  rules: [{backendRefs: [{name: echo, port: 8000}]}]
`;

/** Connects, sends `text`, half-closes, resolves with everything received once the connection closed. */
function tcpExchange(address: string, port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const c = net.connect({ host: address, port, allowHalfOpen: true }, () => c.end(text));
    let got = '';
    c.setEncoding('utf8');
    c.on('data', (d) => (got += d));
    c.on('close', () => resolve(got));
    c.on('error', reject);
  });
}

/** One datagram and its answer (undefined after `ms` without one). */
function udpAsk(address: string, port: number, text: string, ms = 1000): Promise<string | undefined> {
  const s = dgram.createSocket('udp4');
  return new Promise<string | undefined>((resolve) => {
    const t = setTimeout(() => resolve(undefined), ms);
    s.once('message', (m) => {
      clearTimeout(t);
      resolve(m.toString());
    });
    s.send(text, port, address);
  }).finally(() => s.close());
}

const stat = (text: string, name: string) =>
  Number(text.match(new RegExp(`^${name.replace(/\./g, '\\.')}: (\\d+)$`, 'm'))?.[1]);

describe('TCPRoute, UDPRoute and a ListenerSet through the proxy', () => {
  let admin: AdminSession | undefined;
  let echoPod: string;

  beforeAll(async () => {
    await lab.kube.apply(resources);
    await lab.kube.waitForRollout('echo', ns, { timeoutMs: 90_000 });
    echoPod = (await lab.kube.list('v1', 'Pod', ns, 'app=echo')).find((p) => p.status?.phase === 'Running')!.metadata!
      .name!;
    await lab.kube.waitForCondition(GW_API, 'Gateway', 'gw', ns, 'Programmed', { timeoutMs: 90_000 });
    await lab.kube.waitForRollout('gw', ns, { timeoutMs: 90_000 });
  });

  // biome-ignore lint/correctness/noEmptyPattern: vitest passes the suite second; the first argument must be a pattern.
  afterAll(async ({}, suite) => {
    await endScenario(lab, suite, [ns], () => admin?.close());
  });

  it('statuses: routes accepted with resolved refs, the ListenerSet accepted and programmed, counted on the Gateway', async () => {
    for (const kind of ['TCPRoute', 'UDPRoute', 'HTTPRoute']) {
      const name = { TCPRoute: 'tcp', UDPRoute: 'udp', HTTPRoute: 'web' }[kind]!;
      const r = await lab.kube.waitForCondition(GW_API, kind, name, ns, 'ResolvedRefs');
      expect(r.status.parents[0].conditions.find((c: { type: string }) => c.type === 'Accepted')?.status).toBe('True');
    }
    const ls = await lab.kube.waitForCondition(GW_API, 'ListenerSet', 'extra', ns, 'Programmed', { timeoutMs: 60_000 });
    expect(ls.status.conditions.find((c: { type: string }) => c.type === 'Accepted')).toMatchObject({
      status: 'True',
      reason: 'Accepted',
    });
    expect(ls.status.listeners).toMatchObject([
      {
        name: 'http',
        attachedRoutes: 1,
        // An HTTP listener carries HTTPRoute and GRPCRoute (issue 12).
        supportedKinds: [
          { group: 'gateway.networking.k8s.io', kind: 'HTTPRoute' },
          { group: 'gateway.networking.k8s.io', kind: 'GRPCRoute' },
        ],
      },
    ]);
    const gw = await lab.kube.get(GW_API, 'Gateway', 'gw', ns);
    expect(gw?.status.attachedListenerSets).toBe(1);
    expect(
      gw?.status.listeners.map((l: { name: string; attachedRoutes: number }) => [l.name, l.attachedRoutes]),
    ).toEqual([
      ['tcp', 1],
      ['udp', 1],
    ]);
    const svc = await lab.kube.get('v1', 'Service', 'gw', ns);
    expect(svc?.spec.ports.map((p: { port: number; protocol: string }) => `${p.port}/${p.protocol}`).sort()).toEqual([
      `${TCP_PORT}/TCP`,
      `${UDP_PORT}/UDP`,
      `${LS_PORT}/TCP`,
    ]);
  });

  it('TCP: bytes both ways through the TCPRoute, the half-close passed on to the backend and its answer back', async () => {
    const lb = await gatewayAddress(lab.kube, ns, 'gw', TCP_PORT);
    const got = await waitFor('a TCP echo through the Gateway', async () => {
      const r = await tcpExchange(lb.address, lb.port, 'hello over tcp').catch((e: Error) => e.message);
      return { ok: r === `hello over tcp\n${echoPod}`, value: r, seen: r };
    });
    expect(got).toBe(`hello over tcp\n${echoPod}`);
  });

  it('UDP: a datagram round trip through the UDPRoute', async () => {
    const lb = await gatewayAddress(lab.kube, ns, 'gw', UDP_PORT);
    const got = await waitFor('a UDP answer through the Gateway', async () => {
      const r = await udpAsk(lb.address, lb.port, 'ping');
      return { ok: r === `${echoPod}:ping`, value: r, seen: r };
    });
    expect(got).toBe(`${echoPod}:ping`);
  });

  it("HTTP: the HTTPRoute attached to the ListenerSet is served on the ListenerSet's port", async () => {
    const lb = await gatewayAddress(lab.kube, ns, 'gw', LS_PORT);
    await expectHttpEventually({ url: `http://${lb.address}:${lb.port}`, path: '/headers', host }, { status: 200 });
  });

  it("the proxy's config_dump and stats show tcp_proxy and udp_proxy in Envoy's shapes and names", async () => {
    admin = await openProxyAdmin(lab.kube, { namespace: ns, name: 'gw' });
    const dump = await configDump(admin);
    const listeners: any[] = dump.configs
      .filter((c) => String(c['@type']).endsWith('ListenersConfigDump'))
      .flatMap((c) => (c.dynamic_listeners ?? []).map((l: any) => l.active_state?.listener).filter(Boolean));
    const byName = Object.fromEntries(listeners.map((l) => [l.name, l]));
    expect(byName[`listener~${TCP_PORT}`].filter_chains[0].filters[0]).toMatchObject({
      name: 'envoy.filters.network.tcp_proxy',
      typed_config: { stat_prefix: `tcp-${TCP_PORT}`, cluster: `kube_${ns}_echo_9000` },
    });
    expect(byName[`listener~udp~${UDP_PORT}`]).toMatchObject({
      address: { socket_address: { protocol: 'UDP', port_value: UDP_PORT } },
      listener_filters: [{ name: 'envoy.filters.udp_listener.udp_proxy' }],
    });
    expect(byName[`listener~${LS_PORT}`].filter_chains[0].filters[0].name).toBe(
      'envoy.filters.network.http_connection_manager',
    );
    const stats = (await admin.get('/stats')).text;
    expect(stat(stats, `tcp.tcp-${TCP_PORT}.downstream_cx_total`)).toBeGreaterThanOrEqual(1);
    expect(stat(stats, `tcp.tcp-${TCP_PORT}.downstream_cx_rx_bytes_total`)).toBeGreaterThanOrEqual(14);
    expect(stat(stats, `udp.udp-${UDP_PORT}.downstream_sess_total`)).toBeGreaterThanOrEqual(1);
    expect(stat(stats, `udp.udp-${UDP_PORT}.downstream_sess_tx_datagrams`)).toBeGreaterThanOrEqual(1);
    const prom = (await admin.get('/stats/prometheus')).text;
    expect(prom).toMatch(
      new RegExp(`^envoy_tcp_downstream_cx_total\\{envoy_tcp_prefix="tcp-${TCP_PORT}"\\} \\d+$`, 'm'),
    );
  });

  it('explain: the TCPRoute and the UDPRoute are accepted, resolved and held by the proxy (exit 0)', async () => {
    for (const target of ['tcproute/tcp', 'udproute/udp']) {
      const { code, report, run } = await explainJson(lab, target, ns);
      expect(code, run.stdout).toBe(0);
      expect(report.findings.map((f: { message: string }) => f.message)).toEqual(
        expect.arrayContaining([
          `accepted by Gateway ${ns}/gw`,
          'backends resolved',
          expect.stringMatching(/^in the proxy config of Gateway .*: a (tcp|udp)_proxy listener to its backends/),
        ]),
      );
    }
  });
});
