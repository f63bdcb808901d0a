// Contract 4.2, the gateway proxy's admin interface (19000, reached by port-forward): config_dump holds the virtual
// host of the route and the cluster of its backend (Envoy's config_dump structure, ACKED), `listeners` shows the
// Gateway's listener, a `logging` flip changes what the proxy logs (and back), and `stats/prometheus` counters rise
// with traffic by exactly the requests sent.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AdminSession,
  type ConfigDump,
  configDump,
  findRoutes,
  openProxyAdmin,
  setLogLevel,
} from '../lab/toolkit/admin.ts';
import { expectHttpEventually, send } from '../lab/toolkit/http.ts';
import { markLogs } from '../lab/toolkit/logs.ts';
import { type Exposition, parseExposition } from '../system/shared/testing/exposition.ts';
import { artifactNamespaces, collectSuiteFailure } from './support/artifacts.ts';
import { gatewayUrl } from './support/gateway.ts';
import { uniqueName, useLab } from './support/lab.ts';

const GW_API = 'gateway.networking.k8s.io/v1';
const GW_NS = 'gwvendor-system';
const APP_NS = 'sampleapp';
const lab = useLab();
const gw = uniqueName('s04-admin');
const route = gw;
const host = `${gw}.example.com`;
const CLUSTER = 'kube_sampleapp_sampleapp_8000';
const POD_LABEL = `app.orch.io/name=${gw}`;
const T = 'type.googleapis.com/envoy.admin.v3.';
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

/** A sample by name and exact labels (in any order). */
function sample(e: Exposition, name: string, labels: Record<string, string> = {}): number | undefined {
  const want = Object.entries(labels);
  return e.samples.find(
    (s) => s.name === name && Object.keys(s.labels).length === want.length && want.every(([k, v]) => s.labels[k] === v),
  )?.value;
}

/** `active loggers:` lines of the proxy's /logging → logger → level. */
function levels(text: string): Record<string, string> {
  return Object.fromEntries([...text.matchAll(/^ {2}(\w+): (\w+)$/gm)].map((m) => [m[1], m[2]]));
}

describe('proxy admin interface (contract 4.2)', () => {
  let admin: AdminSession;
  let url: string;
  let dump: ConfigDump;

  beforeAll(async () => {
    await lab.kube.apply(resources);
    await lab.kube.waitForCondition(GW_API, 'Gateway', gw, GW_NS, 'Programmed', { timeoutMs: 60_000 });
    url = await gatewayUrl(lab.kube, GW_NS, gw, 80);
    // The route serves before config_dump is read, so the dump has it.
    await expectHttpEventually({ url, path: '/headers', host }, { status: 200 });
    admin = await openProxyAdmin(lab.kube, { namespace: GW_NS, name: gw });
  });

  // biome-ignore lint/correctness/noEmptyPattern: vitest passes the suite second; the first argument must be a pattern.
  afterAll(async ({}, suite) => {
    await collectSuiteFailure(suite);
    await admin?.close();
    if (process.env.KEEP !== '1') await lab.kube.delete(resources, { wait: true }).catch(() => undefined);
  });

  it('config_dump: Envoy sections in order, the route’s virtual host and its cluster, ACKED', async () => {
    const r = await admin.get('/config_dump');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^application\/json/);
    expect(r.headers.get('server')).toBe('envoy');
    dump = JSON.parse(r.text);
    expect(dump.configs.map((c) => c['@type'])).toEqual(
      [
        'BootstrapConfigDump',
        'ClustersConfigDump',
        'ListenersConfigDump',
        'ScopedRoutesConfigDump',
        'RoutesConfigDump',
        'SecretsConfigDump',
      ].map((n) => T + n),
    );
    // The bootstrap names this proxy (interfaces page: node.id = <pod>.<ns>, role per Gateway).
    const boot = dump.configs[0].bootstrap;
    expect(boot.node.id).toBe(`${admin.pod}.${GW_NS}`);
    expect(boot.node.metadata.role).toBe(`gwvendor-kube-gateway-api~${GW_NS}~${gw}`);

    const hits = findRoutes(dump, { host, path: '/headers' });
    expect(hits.length).toBe(1);
    expect(hits[0].vhost).toBe(`listener~80~${host.replace(/[.]/g, '_')}`);
    expect(hits[0].domains).toEqual([host]);
    expect(hits[0].name).toBe(`httproute/${APP_NS}/${route}/rule/0/match/0`);
    expect(hits[0].route.route.cluster).toBe(CLUSTER);
    const routes = dump.configs.find((c) => c['@type'] === `${T}RoutesConfigDump`)!;
    const rc = routes.dynamic_route_configs.find((d: any) => d.route_config.name === hits[0].routeConfig);
    expect(rc.client_status).toBe('ACKED');
    expect(rc.version_info).toMatch(/\S/);

    const clusters = dump.configs.find((c) => c['@type'] === `${T}ClustersConfigDump`)!;
    const cl = clusters.dynamic_active_clusters.find((c: any) => c.cluster.name === CLUSTER);
    expect(cl, `${CLUSTER} in dynamic_active_clusters`).toBeDefined();
    expect(cl.cluster['@type']).toBe('type.googleapis.com/envoy.config.cluster.v3.Cluster');
    expect(cl.client_status).toBe('ACKED');
    expect(Number.isNaN(Date.parse(cl.last_updated))).toBe(false);

    // Envoy's query forms: one cluster name per element, and the endpoints with include_eds.
    const names = await admin.json('/config_dump?resource=dynamic_active_clusters&mask=cluster.name');
    expect(names.configs).toContainEqual({
      '@type': `${T}ClustersConfigDump.DynamicCluster`,
      cluster: { '@type': 'type.googleapis.com/envoy.config.cluster.v3.Cluster', name: CLUSTER },
    });
    // Envoy's answers to bad queries.
    const unknownResource = await admin.get('/config_dump?resource=no_such_field');
    expect([unknownResource.status, unknownResource.text.trim()]).toEqual([
      404,
      'no_such_field not found in config dump',
    ]);
    const badRegex = await admin.get('/config_dump?name_regex=(');
    expect(badRegex.status).toBe(400);
    expect(badRegex.text).toMatch(/^Error while parsing name_regex/);
    const byName = await admin.json(
      `/config_dump?resource=dynamic_active_clusters&name_regex=${encodeURIComponent(`^${CLUSTER}$`)}`,
    );
    expect(byName.configs.map((c: any) => c.cluster.name)).toEqual([CLUSTER]);
    const withEds = await configDump(admin, { includeEds: true });
    const eds = withEds.configs.find((c) => c['@type'] === `${T}EndpointsConfigDump`)!;
    const cla = eds.dynamic_endpoint_configs.find((e: any) => e.endpoint_config.cluster_name === CLUSTER);
    const appPods = await lab.kube.list('v1', 'Pod', APP_NS, 'app=sampleapp');
    const addresses = cla.endpoint_config.endpoints.flatMap((e: any) =>
      e.lb_endpoints.map((l: any) => l.endpoint.address.socket_address.address),
    );
    expect(addresses.sort()).toEqual(appPods.map((p) => p.status.podIP).sort());
  });

  it('listeners shows the Gateway listener, as text and as JSON', async () => {
    const r = await admin.get('/listeners');
    expect(r.status).toBe(200);
    expect(r.text.split('\n')).toContain('listener~80::0.0.0.0:80');
    const j = await admin.json('/listeners?format=json');
    expect(j.listener_statuses).toContainEqual({
      name: 'listener~80',
      local_address: { socket_address: { address: '0.0.0.0', port_value: 80 } },
    });
    // An unknown admin path lists the commands, as Envoy does; /ready reports LIVE.
    const unknown = await admin.get('/no_such_command');
    expect(unknown.status).toBe(404);
    expect(unknown.text).toMatch(/^invalid path\. admin commands are:/);
    expect(unknown.text).toMatch(/^ {2}\/listeners( \(POST\))?: /m);
    const ready = await admin.get('/ready');
    expect([ready.status, ready.text.trim()]).toEqual([200, 'LIVE']);
    // The same listener in config_dump, active.
    const listeners = dump.configs.find((c) => c['@type'] === `${T}ListenersConfigDump`)!;
    const dl = listeners.dynamic_listeners.find((l: any) => l.name === 'listener~80');
    expect(dl.active_state.listener.address.socket_address.port_value).toBe(80);
    expect(dl.client_status).toBe('ACKED');
  });

  it('a logging flip takes effect: router debug lines appear, and stop after the flip back', async () => {
    const before = await admin.post('/logging');
    expect(before.text).toMatch(/^active loggers:\n/);
    expect(before.text).toMatch(/^ {2}router: info$/m);
    // A change needs POST, as in Envoy.
    const get = await admin.get('/logging?router=debug');
    expect([get.status, get.text.trim()]).toEqual([405, 'Method GET not allowed, POST required.']);

    await setLogLevel(admin, { router: 'debug' });
    expect((await admin.post('/logging')).text).toMatch(/^ {2}router: debug$/m);
    let mark = await markLogs(lab.kube, { namespace: GW_NS, labelSelector: POD_LABEL });
    expect((await send({ url, path: '/headers', host })).status).toBe(200);
    const routerDebug =
      /^\[[^\]]+\]\[\d+\]\[debug\]\[router\] .*cluster 'kube_sampleapp_sampleapp_8000' match for URL '\/headers'/;
    await mark.waitFor('a router debug line for the request', routerDebug, { timeoutMs: 10_000 });

    // Back to info; conn_handler goes to debug so that the next request's own log line shows it was processed.
    await setLogLevel(admin, { router: 'info', conn_handler: 'debug' });
    const after = (await admin.post('/logging')).text;
    expect(after).toMatch(/^ {2}router: info$/m);
    expect(after).toMatch(/^ {2}conn_handler: debug$/m);
    mark = await markLogs(lab.kube, { namespace: GW_NS, labelSelector: POD_LABEL });
    expect((await send({ url, path: '/headers', host })).status).toBe(200);
    const lines = await mark.waitFor(
      'the conn_handler debug line of the next request',
      /\[debug\]\[conn_handler\] .*new connection from/,
      {
        timeoutMs: 10_000,
      },
    );
    expect(lines.filter((l) => /\]\[debug\]\[router\] /.test(l))).toEqual([]);
    await setLogLevel(admin, { conn_handler: 'info' });

    // Envoy's other forms: several loggers at once with `paths`, and a clear error for an unknown logger.
    const paths = await admin.post('/logging?paths=pool:debug,client:debug');
    expect(paths.status).toBe(200);
    expect(paths.text).toMatch(/^ {2}pool: debug$/m);
    expect(paths.text).toMatch(/^ {2}client: debug$/m);
    const unknown = await admin.post('/logging?no_such_logger=debug');
    expect(unknown.status).toBe(400);
    expect(unknown.text).toMatch(/^error: unknown logger name\n\n/);
    await setLogLevel(admin, 'info');
    const all = levels((await admin.post('/logging')).text);
    expect(Object.keys(all).length).toBeGreaterThan(10);
    expect(new Set(Object.values(all))).toEqual(new Set(['info']));
  });

  it('stats/prometheus: the counters of the listener, connection manager and cluster rise with traffic', async () => {
    const read = async () => {
      const r = await admin.get('/stats/prometheus');
      expect(r.status).toBe(200);
      return parseExposition(r.text);
    };
    const before = await read();
    // The built-in format: a TYPE line per metric, no HELP lines, Envoy's names and tag labels.
    expect(before.help.size).toBe(0);
    expect(before.types.get('envoy_cluster_upstream_rq_total')).toBe('counter');
    expect(before.types.get('envoy_server_live')).toBe('gauge');
    expect(sample(before, 'envoy_server_live')).toBe(1);
    expect(sample(before, 'envoy_control_plane_connected_state')).toBe(1);
    const counters = {
      upstream: ['envoy_cluster_upstream_rq_total', { envoy_cluster_name: CLUSTER }],
      upstream2xx: ['envoy_cluster_upstream_rq_xx', { envoy_response_code_class: '2', envoy_cluster_name: CLUSTER }],
      downstream: ['envoy_http_downstream_rq_total', { envoy_http_conn_manager_prefix: 'http' }],
      connections: ['envoy_listener_downstream_cx_total', { envoy_listener_address: '0.0.0.0_80' }],
    } as const;
    const value = (e: Exposition, k: keyof typeof counters) => sample(e, counters[k][0], counters[k][1]);
    for (const k of Object.keys(counters) as (keyof typeof counters)[]) {
      expect(value(before, k), `${counters[k][0]} ${JSON.stringify(counters[k][1])}`).toBeTypeOf('number');
    }
    const N = 5;
    for (let i = 0; i < N; i++) expect((await send({ url, path: '/headers', host })).status).toBe(200);
    const after = await read();
    // A valid exposition (syntax, TYPE lines, unique series, consistent histograms), as promtool would read it.
    expect(before.problems).toEqual([]);
    expect(after.problems).toEqual([]);
    // Only this scenario sends traffic to this Gateway's proxy: the cluster counts exactly the requests sent.
    expect(value(after, 'upstream')! - value(before, 'upstream')!).toBe(N);
    expect(value(after, 'upstream2xx')! - value(before, 'upstream2xx')!).toBe(N);
    expect(value(after, 'downstream')! - value(before, 'downstream')!).toBeGreaterThanOrEqual(N);
    expect(value(after, 'connections')! - value(before, 'connections')!).toBeGreaterThanOrEqual(N);
  });
});
