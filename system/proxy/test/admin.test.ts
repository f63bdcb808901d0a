// The admin interface: every endpoint's format, headers, status codes and error texts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SampleApp, startSampleApp } from '../../sampleapp/main.ts';
import { decode, packAny } from '../../shared/envoy/protojson.ts';
import { lookupType, typeNameOf } from '../../shared/envoy/protos.ts';
import { checkExposition } from '../../shared/testing/exposition.ts';
import {
  cla,
  edsCluster,
  httpRequest,
  listener,
  route,
  routeConfig,
  startXdsFixture,
  vhost,
  type XdsFixture,
} from '../testing/harness.ts';

type J = Record<string, any>;

const APP = 'kube_sampleapp_sampleapp_8000';
let app: SampleApp;
let fx: XdsFixture;
const admin = (path: string, method = 'GET') => fx.proxy.admin(path, method);

beforeAll(async () => {
  app = await startSampleApp();
  fx = await startXdsFixture({
    bootstrap: {
      static_resources: {
        clusters: [],
        listeners: [
          listener('readiness', 0, {
            accessLog: false,
            routeConfig: routeConfig('readiness', [
              vhost(
                'all',
                ['*'],
                [{ match: { path: '/ready' }, direct_response: { status: 200, body: { inline_string: 'ok' } } }],
              ),
            ]),
          }),
        ],
      },
    },
  });
  await fx.apply({
    clusters: [edsCluster(APP), edsCluster('other')],
    endpoints: [
      cla(APP, [['127.0.0.1', app.port]]),
      cla('other', [{ address: '127.0.0.1', port: 1, health: 'UNHEALTHY' }]),
    ],
    listeners: [listener('listener~8080', 0, { rds: 'listener~8080' })],
    routes: [routeConfig('listener~8080', [vhost('www', ['www.example.com'], [route('/', APP)])])],
  });
  await fx.proxy.server.live;
  // Some traffic for the stats.
  for (let i = 0; i < 3; i++) {
    await httpRequest(`http://127.0.0.1:${fx.proxy.port('listener~8080')}/get`, { host: 'www.example.com' });
  }
});

afterAll(async () => {
  await fx?.close();
  await app?.close();
});

describe('every admin response', () => {
  it("carries Envoy's admin headers", async () => {
    const r = await admin('/ready');
    expect(r.headers['cache-control']).toBe('no-cache, max-age=0');
    expect(r.headers['x-content-type-options']).toBe('nosniff');
    expect(r.headers.server).toBe('envoy');
    expect(r.headers['content-type']).toBe('text/plain; charset=UTF-8');
  });

  it('unknown path: 404 "invalid path." and the help; GET on a mutating endpoint: 405', async () => {
    const r = await admin('/nope');
    expect(r.status).toBe(404);
    expect(r.body.startsWith('invalid path. admin commands are:\n')).toBe(true);
    for (const path of ['/logging', '/quitquitquit', '/healthcheck/fail', '/healthcheck/ok', '/reset_counters']) {
      const m = await admin(path);
      expect(m.status).toBe(405);
      expect(m.body).toBe('Method GET not allowed, POST required.');
    }
  });

  it('/help lists every command, sorted, mutating ones marked (POST)', async () => {
    const r = await admin('/help');
    const lines = r.body.split('\n');
    expect(lines[0]).toBe('admin commands are:');
    const cmds = lines.filter((l) => /^ {2}\//.test(l)).map((l) => l.trim().split(/[: ]/)[0]!);
    expect(cmds).toEqual([...cmds].sort());
    for (const c of [
      '/',
      '/clusters',
      '/config_dump',
      '/help',
      '/listeners',
      '/logging',
      '/quitquitquit',
      '/ready',
      '/server_info',
      '/stats',
      '/stats/prometheus',
      '/healthcheck/fail',
      '/healthcheck/ok',
    ]) {
      expect(cmds).toContain(c);
    }
    expect(r.body).toContain('  /logging (POST): query/change logging levels');
    expect(r.body).toContain('  /config_dump: dump current Envoy configs (experimental)');
    expect(r.body).toContain('      resource: The resource to dump');
  });

  it('/ is an HTML index linking the endpoints', async () => {
    const r = await admin('/');
    expect(r.headers['content-type']).toMatch(/^text\/html/);
    expect(r.body).toContain('<a href="/config_dump">/config_dump</a>');
    expect(r.body).toContain('<form action="/logging" method="post">');
  });
});

describe('/config_dump', () => {
  const dump = async (q = '') => {
    const r = await admin(`/config_dump${q}`);
    return {
      status: r.status,
      body: r.body,
      json: r.status === 200 ? (JSON.parse(r.body) as J) : undefined,
      type: r.headers['content-type'],
    };
  };

  it('sections in Envoy order, pretty-printed JSON with snake_case names', async () => {
    const d = await dump();
    expect(d.type).toBe('application/json');
    expect(
      d.body.startsWith('{\n "configs": [\n  {\n   "@type": "type.googleapis.com/envoy.admin.v3.BootstrapConfigDump"'),
    ).toBe(true);
    expect(d.json!.configs.map((c: J) => c['@type'].split('.').pop())).toEqual([
      'BootstrapConfigDump',
      'ClustersConfigDump',
      'ListenersConfigDump',
      'ScopedRoutesConfigDump',
      'RoutesConfigDump',
      'SecretsConfigDump',
    ]);
    const withEds = await dump('?include_eds');
    expect(withEds.json!.configs.map((c: J) => c['@type'].split('.').pop())).toEqual([
      'BootstrapConfigDump',
      'ClustersConfigDump',
      'EndpointsConfigDump',
      'ListenersConfigDump',
      'ScopedRoutesConfigDump',
      'RoutesConfigDump',
      'SecretsConfigDump',
    ]);
    const clusters = d.json!.configs[1];
    const dyn = clusters.dynamic_active_clusters.find((c: J) => c.cluster.name === APP);
    expect(dyn).toMatchObject({
      version_info: '1',
      client_status: 'ACKED',
      cluster: {
        '@type': 'type.googleapis.com/envoy.config.cluster.v3.Cluster',
        name: APP,
        type: 'EDS',
        connect_timeout: '1s',
      },
    });
    expect(dyn.last_updated).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    const boot = d.json!.configs[0].bootstrap;
    expect(boot.node.id).toBe('gw-0.gwvendor-system');
    expect(boot.dynamic_resources.ads_config.grpc_services[0].envoy_grpc.cluster_name).toBe('xds_cluster');
  });

  it('every Any decodes with the Envoy protos', async () => {
    const d = await dump('?include_eds');
    let anys = 0;
    const visit = (v: unknown): void => {
      if (Array.isArray(v)) {
        for (const x of v) visit(x);
        return;
      }
      if (!v || typeof v !== 'object') return;
      const o = v as J;
      if (typeof o['@type'] === 'string') {
        anys++;
        const any = packAny(o);
        const type = lookupType(typeNameOf(any.type_url));
        // Wire bytes decode with the real message type, and print back to the same JSON.
        expect(() => type.decode(any.value)).not.toThrow();
        const { '@type': _t, ...fields } = o;
        expect(decode(typeNameOf(any.type_url), any.value)).toEqual(fields);
      }
      for (const x of Object.values(o)) visit(x);
    };
    visit(d.json);
    expect(anys).toBeGreaterThan(10);
  });

  it('resource= prints each element as its own Any; mask= trims them', async () => {
    const r = await dump('?resource=dynamic_active_clusters&mask=cluster.name');
    expect(r.json!.configs).toEqual([
      {
        '@type': 'type.googleapis.com/envoy.admin.v3.ClustersConfigDump.DynamicCluster',
        cluster: { '@type': 'type.googleapis.com/envoy.config.cluster.v3.Cluster', name: APP },
      },
      {
        '@type': 'type.googleapis.com/envoy.admin.v3.ClustersConfigDump.DynamicCluster',
        cluster: { '@type': 'type.googleapis.com/envoy.config.cluster.v3.Cluster', name: 'other' },
      },
    ]);
    const l = await dump('?resource=dynamic_listeners');
    expect(l.json!.configs[0]['@type']).toBe('type.googleapis.com/envoy.admin.v3.ListenersConfigDump.DynamicListener');
    expect(l.json!.configs[0].name).toBe('listener~8080');
  });

  it('resource errors: unknown 404, not repeated 400', async () => {
    const u = await dump('?resource=nope');
    expect(u.status).toBe(404);
    expect(u.body).toBe('nope not found in config dump');
    const n = await dump('?resource=version_info');
    expect(n.status).toBe(400);
    expect(n.body).toBe('version_info is not a repeated field. Use ?mask=version_info to get only this field');
  });

  it('mask= alone applies to every dump it fits', async () => {
    const r = await dump('?mask=static_listeners');
    expect(r.json!.configs).toHaveLength(1);
    expect(r.json!.configs[0]['@type']).toBe('type.googleapis.com/envoy.admin.v3.ListenersConfigDump');
    expect(Object.keys(r.json!.configs[0])).toEqual(['@type', 'static_listeners']);
    // A path through a repeated field does not fit (protobuf FieldMaskUtil), as in Envoy.
    expect((await dump('?mask=dynamic_listeners.name')).status).toBe(400);
    const v = await dump('?mask=version_info');
    expect(v.json!.configs.map((c: J) => c['@type'].split('.').pop())).toEqual([
      'ClustersConfigDump',
      'ListenersConfigDump',
    ]);
    const bad = await dump('?mask=nope');
    expect(bad.status).toBe(400);
    expect(bad.body).toBe('FieldMask nope could not be successfully applied to any configs.');
  });

  it('name_regex filters by resource name; a bad regex is a 400', async () => {
    const r = await dump('?resource=dynamic_active_clusters&name_regex=kube_.*');
    expect(r.json!.configs.map((c: J) => c.cluster.name)).toEqual([APP]);
    const bad = await dump('?name_regex=(');
    expect(bad.status).toBe(400);
    expect(bad.body).toMatch(/^Error while parsing name_regex from \(: /);
  });
});

describe('/listeners, /clusters', () => {
  it('/listeners text and JSON', async () => {
    const text = await admin('/listeners');
    const port = fx.proxy.port('listener~8080');
    const readiness = fx.proxy.port('readiness');
    expect(text.body).toBe(`readiness::127.0.0.1:${readiness}\nlistener~8080::127.0.0.1:${port}\n`);
    const json = JSON.parse((await admin('/listeners?format=json')).body);
    expect(json).toEqual({
      listener_statuses: [
        { name: 'readiness', local_address: { socket_address: { address: '127.0.0.1', port_value: readiness } } },
        { name: 'listener~8080', local_address: { socket_address: { address: '127.0.0.1', port_value: port } } },
      ],
    });
  });

  it('/clusters text lines and JSON', async () => {
    const text = (await admin('/clusters')).body.split('\n');
    const host = `127.0.0.1:${app.port}`;
    expect(text).toContain(`${APP}::observability_name::${APP}`);
    expect(text).toContain(`${APP}::default_priority::max_connections::1024`);
    expect(text).toContain(`${APP}::added_via_api::true`);
    expect(text).toContain(`${APP}::${host}::rq_success::3`);
    expect(text).toContain(`${APP}::${host}::rq_total::3`);
    expect(text).toContain(`${APP}::${host}::health_flags::healthy`);
    expect(text).toContain('other::127.0.0.1:1::health_flags::/failed_eds_health');
    expect(text).toContain('xds_cluster::added_via_api::false');
    const json = JSON.parse((await admin('/clusters?format=json')).body);
    const c = json.cluster_statuses.find((x: J) => x.name === APP);
    expect(c.added_via_api).toBe(true);
    expect(c.host_statuses[0].address.socket_address.port_value).toBe(app.port);
    expect(c.host_statuses[0].health_status.eds_health_status).toBe('UNKNOWN');
    expect(
      json.cluster_statuses.find((x: J) => x.name === 'other').host_statuses[0].health_status.eds_health_status,
    ).toBe('UNHEALTHY');
    expect(c.host_statuses[0].stats).toContainEqual({ type: 'COUNTER', name: 'rq_total', value: '3' });
  });
});

describe('/logging', () => {
  it('POST with no parameters lists the loggers', async () => {
    const r = await admin('/logging', 'POST');
    expect(r.status).toBe(200);
    expect(r.body.startsWith('active loggers:\n  admin: info\n')).toBe(true);
    expect(r.body).toContain('\n  router: info\n');
  });

  it('sets all (?level=), one (?<name>=), several (?paths=); warn and warning both work', async () => {
    expect((await admin('/logging?level=debug', 'POST')).body).toContain('  http: debug\n');
    const one = await admin('/logging?router=warn', 'POST');
    expect(one.body).toContain('  router: warning\n');
    expect(one.body).toContain('  http: debug\n');
    const paths = await admin('/logging?paths=http:trace,pool:error', 'POST');
    expect(paths.body).toContain('  http: trace\n');
    expect(paths.body).toContain('  pool: error\n');
    await admin('/logging?level=info', 'POST');
    expect(fx.proxy.server.logs.level('http')).toBe('info');
  });

  it('errors answer 400 with the error, the usage and the loggers', async () => {
    const unknown = await admin('/logging?nope=debug', 'POST');
    expect(unknown.status).toBe(400);
    expect(
      unknown.body.startsWith('error: unknown logger name\n\nusage: /logging?<name>=<level> (change single level)\n'),
    ).toBe(true);
    expect(unknown.body).toContain('levels: trace debug info warning error critical off \n');
    expect(unknown.body).toContain('active loggers:\n');
    expect((await admin('/logging?level=loud', 'POST')).body).toMatch(/^error: unknown logger level\n/);
    expect((await admin('/logging?a=info&b=info', 'POST')).body).toMatch(/^error: invalid number of parameters\n/);
    expect((await admin('/logging?paths=http', 'POST')).body).toMatch(
      /^error: empty logger name or empty logger level\n/,
    );
  });
});

describe('/stats and /stats/prometheus', () => {
  it('/stats text, filter and JSON', async () => {
    const text = (await admin('/stats')).body;
    expect(text).toContain(`cluster.${APP}.upstream_rq_total: 3\n`);
    expect(text).toContain('server.live: 1\n');
    const f = (await admin('/stats?filter=^cluster_manager\\.cds\\.')).body.trim().split('\n');
    expect(f.every((l) => l.startsWith('cluster_manager.cds.'))).toBe(true);
    expect(f).toContain('cluster_manager.cds.update_success: 1');
    const j = JSON.parse((await admin('/stats?format=json&filter=upstream_rq_total')).body);
    expect(j.stats).toContainEqual({ name: `cluster.${APP}.upstream_rq_total`, value: 3 });
    expect((await admin('/stats?filter=(')).status).toBe(400);
  });

  it('/stats/prometheus is a valid exposition and has the families users query', async () => {
    const r = await admin('/stats/prometheus');
    expect(r.headers['content-type']).toBe('text/plain; version=0.0.4; charset=UTF-8');
    expect(checkExposition(r.body)).toEqual([]);
    expect(r.body).toContain(`envoy_cluster_upstream_rq_total{envoy_cluster_name="${APP}"} 3`);
    expect(r.body).toContain('envoy_control_plane_connected_state 1');
    expect(r.body).toContain('envoy_cluster_manager_cds_update_success 1');
    expect(r.body).toContain('envoy_listener_manager_lds_update_rejected 0');
    expect(r.body).toContain('# TYPE envoy_server_live gauge\nenvoy_server_live 1\n');
    expect(r.body).toMatch(/envoy_http_downstream_rq_total\{envoy_http_conn_manager_prefix="http"\} 3\n/);
  });
});

describe('/server_info, /ready, health checks', () => {
  it('/server_info is envoy.admin.v3.ServerInfo JSON', async () => {
    const j = JSON.parse((await admin('/server_info')).body);
    expect(j.state).toBe('LIVE');
    expect(j.version).toMatch(/^gwlab\/\d+\.\d+\.\d+\/Clean\/RELEASE\//);
    expect(j.uptime_current_epoch).toMatch(/^\d+s$/);
    expect(j.command_line_options.log_level).toBe('info');
    expect(j.command_line_options).toHaveProperty('component_log_level');
    expect(j.node.id).toBe('gw-0.gwvendor-system');
  });

  it('/healthcheck/fail makes /ready answer 503 DRAINING until /healthcheck/ok', async () => {
    expect((await admin('/ready')).body).toBe('LIVE\n');
    expect((await admin('/healthcheck/fail', 'POST')).body).toBe('OK\n');
    const r = await admin('/ready');
    expect(r.status).toBe(503);
    expect(r.body).toBe('DRAINING\n');
    expect(fx.proxy.server.stats.value('server.state')).toBe(1);
    await admin('/healthcheck/ok', 'POST');
    expect((await admin('/ready')).status).toBe(200);
  });

  it('/reset_counters zeroes counters', async () => {
    await admin('/reset_counters', 'POST');
    expect((await admin('/stats?filter=upstream_rq_total$')).body).toContain(`cluster.${APP}.upstream_rq_total: 0`);
  });

  it('static listeners serve once the server is live', async () => {
    const r = await httpRequest(`http://127.0.0.1:${fx.proxy.port('readiness')}/ready`, { host: 'x' });
    expect(r.status).toBe(200);
  });
});
