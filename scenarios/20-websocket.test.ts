// Issue 12 item 5 end to end on the lab, as a new user tries it: an echo backend (the system image's `echo`, upstream
// echo-basic's /ws WebSocket echo) behind a Service port with `appProtocol: kubernetes.io/ws` (Gateway API's
// GEP-1911 rule), an HTTPRoute to it through a Gateway's HTTP listener, and a WebSocket opened through the Gateway's
// load balancer address with the `ws` client: 101, a text and a binary frame echoed, then closed. The proxy's
// config_dump shows the connection manager's `upgrade_configs` (websocket, as Envoy Gateway and kgateway set on every
// HCM), its stats count the upgrade (downstream_cx_upgrades_total, _active back to 0 once closed), and a plain GET of
// /ws still gets the backend's 400 (no upgrade, no tunnel).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { type AdminSession, configDump, openProxyAdmin } from '../lab/toolkit/admin.ts';
import { expectHttpEventually } from '../lab/toolkit/http.ts';
import { waitFor } from '../lab/toolkit/wait.ts';
import { artifactNamespaces, endScenario } from './support/artifacts.ts';
import { gatewayAddress } from './support/gateway.ts';
import { uniqueName, useLab } from './support/lab.ts';

const GW_API = 'gateway.networking.k8s.io/v1';
const lab = useLab();
const ns = uniqueName('s20-ws');
const host = 'ws.s20.example.com';
const PORT = 9420;
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
  ports: [{name: ws, port: 8082, targetPort: 3000, protocol: TCP, appProtocol: kubernetes.io/ws}]
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
        args: [echo]
        env:
        - {name: POD_NAME, valueFrom: {fieldRef: {fieldPath: metadata.name}}}
        - {name: NAMESPACE, valueFrom: {fieldRef: {fieldPath: metadata.namespace}}}
        ports: [{name: http, containerPort: 3000, protocol: TCP}]
        readinessProbe: {httpGet: {path: /health, port: 3000}, periodSeconds: 1}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: ${ns}}
spec:
  gatewayClassName: gwvendor
  listeners: [{name: http, protocol: HTTP, port: ${PORT}}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: ws, namespace: ${ns}}
spec:
  parentRefs: [{name: gw}]
  hostnames: [${host}]
  rules: [{backendRefs: [{name: echo, port: 8082}]}]
`;

/** Opens a WebSocket to /ws through the Gateway with the route's Host; the 101 response's headers with it. */
function openWs(lb: { address: string; port: number }): Promise<{ ws: WebSocket; headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://${lb.address}:${lb.port}/ws`, {
      headers: { host },
      origin: `ws://gateway/${ns}`,
      handshakeTimeout: 10_000,
    });
    let headers: Record<string, unknown> = {};
    ws.once('upgrade', (res) => {
      headers = res.headers;
    });
    ws.once('open', () => resolve({ ws, headers }));
    ws.once('unexpected-response', (req, res) => {
      req.destroy();
      reject(new Error(`status ${res.statusCode} instead of 101`));
    });
    ws.once('error', reject);
  });
}

function roundTrip(ws: WebSocket, data: string | Buffer): Promise<{ data: Buffer; binary: boolean }> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error('no frame back within 10 s')), 10_000);
    ws.once('message', (d, binary) => {
      clearTimeout(t);
      resolve({ data: d as Buffer, binary });
    });
    ws.send(data, { binary: typeof data !== 'string' });
  });
}

const stat = (text: string, name: string) =>
  Number(text.match(new RegExp(`^${name.replace(/\./g, '\\.')}: (\\d+)$`, 'm'))?.[1]);

describe('WebSocket through the Gateway (appProtocol kubernetes.io/ws)', () => {
  let admin: AdminSession | undefined;
  let lb: { address: string; port: number };

  beforeAll(async () => {
    await lab.kube.apply(resources);
    await lab.kube.waitForRollout('echo', ns, { timeoutMs: 90_000 });
    await lab.kube.waitForCondition(GW_API, 'Gateway', 'gw', ns, 'Programmed', { timeoutMs: 90_000 });
    await lab.kube.waitForRollout('gw', ns, { timeoutMs: 90_000 });
    await lab.kube.waitForCondition(GW_API, 'HTTPRoute', 'ws', ns, 'ResolvedRefs');
    lb = await gatewayAddress(lab.kube, ns, 'gw', PORT);
    // A plain request through the route first: the listener is serving it (echo-basic answers a GET of /ws 400).
    await expectHttpEventually({ url: `http://${lb.address}:${lb.port}`, path: '/ws', host }, { status: 400 });
  });

  // biome-ignore lint/correctness/noEmptyPattern: vitest passes the suite second; the first argument must be a pattern.
  afterAll(async ({}, suite) => {
    await endScenario(lab, suite, [ns], () => admin?.close());
  });

  it('echoes a text and a binary frame through the Gateway, then closes cleanly; the stats count the upgrade', async () => {
    admin = await openProxyAdmin(lab.kube, { namespace: ns, name: 'gw' });
    const before = stat((await admin.get('/stats')).text, 'http.http.downstream_cx_upgrades_total') || 0;
    const { ws, headers } = await openWs(lb);
    expect(headers.upgrade).toBe('websocket');
    expect(headers.server).toBe('envoy');
    const text = await roundTrip(ws, 'Websocket Support!');
    expect({ text: text.data.toString(), binary: text.binary }).toEqual({ text: 'Websocket Support!', binary: false });
    const bin = await roundTrip(ws, Buffer.from([1, 2, 3, 4, 5, 6, 7]));
    expect({ bytes: [...bin.data], binary: bin.binary }).toEqual({ bytes: [1, 2, 3, 4, 5, 6, 7], binary: true });
    const open = await admin.get('/stats');
    expect(stat(open.text, 'http.http.downstream_cx_upgrades_total')).toBe(before + 1);
    expect(stat(open.text, 'http.http.downstream_cx_upgrades_active')).toBe(1);
    const code = await new Promise<number>((resolve) => {
      ws.once('close', (c) => resolve(c));
      ws.close(1000, 'done');
    });
    expect(code).toBe(1000);
    await waitFor('the upgrade gauge back to 0', async () => {
      const n = stat((await admin!.get('/stats')).text, 'http.http.downstream_cx_upgrades_active');
      return { ok: n === 0, value: n, seen: n };
    });
  });

  it("config_dump: every HTTP connection manager allows websocket upgrades; the route's cluster is the ws port", async () => {
    admin ??= await openProxyAdmin(lab.kube, { namespace: ns, name: 'gw' });
    const dump = await configDump(admin);
    const listener = dump.configs
      .filter((c) => String(c['@type']).endsWith('ListenersConfigDump'))
      .flatMap((c) => (c.dynamic_listeners ?? []).map((l: any) => l.active_state?.listener).filter(Boolean))
      .find((l: any) => l.name === `listener~${PORT}`);
    const hcm = listener.filter_chains[0].filters[0];
    expect(hcm.name).toBe('envoy.filters.network.http_connection_manager');
    expect(hcm.typed_config.upgrade_configs).toEqual([{ upgrade_type: 'websocket' }]);
    const clusters = dump.configs
      .filter((c) => String(c['@type']).endsWith('ClustersConfigDump'))
      .flatMap((c) => (c.dynamic_active_clusters ?? []).map((x: any) => x.cluster?.name));
    expect(clusters).toContain(`kube_${ns}_echo_8082`);
  });
});
