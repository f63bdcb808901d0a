// envoy.filters.http.ext_proc (headers mode) end to end through the proxy against the ext-proc sample
// (system/extproc) and a silent processor, as Envoy's ext_proc filter behaves (source/extensions/filters/http/
// ext_proc/ext_proc.cc): request header mutations reach the upstream, an immediate_response answers the client, a
// processor that does not answer within message_timeout or is down fails the request (500) unless
// failure_mode_allow; what the proxy does not implement is NACKed with a message saying so.
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ExtProc, externalProcessorService, startExtProc } from '../../extproc/main.ts';
import { type SampleApp, startSampleApp } from '../../sampleapp/main.ts';
import {
  cla,
  edsCluster,
  H2_CLUSTER,
  httpRequest,
  listener,
  route,
  routeConfig,
  startXdsFixture,
  vhost,
  type XdsFixture,
} from '../testing/harness.ts';
import { closedPort } from '../testing/upstream.ts';

type J = Record<string, any>;

const APP = 'kube_sampleapp_sampleapp_8000';
const L = 'listener~8080';
const T = 'type.googleapis.com/envoy.extensions.filters.http.ext_proc.v3.';
const h2 = H2_CLUSTER;

let app: SampleApp;
let proc: ExtProc;
let silent: grpc.Server;
let silentPort: number;
let fx: XdsFixture;
let deadPort: number;

const extProc = (cluster: string, extra: J = {}) => ({
  name: 'envoy.filters.http.ext_proc',
  typed_config: {
    '@type': `${T}ExternalProcessor`,
    grpc_service: { envoy_grpc: { cluster_name: cluster } },
    processing_mode: { response_header_mode: 'SKIP' },
    message_timeout: '2s',
    ...extra,
  },
});

async function push(filters: J[], routes: J[] = [route('/', APP)]) {
  const res = await fx.apply({
    clusters: [edsCluster(APP), edsCluster('proc', h2), edsCluster('silent', h2), edsCluster('dead', h2)],
    endpoints: [
      cla(APP, [['127.0.0.1', app.port]]),
      cla('proc', [['127.0.0.1', proc.port]]),
      cla('silent', [['127.0.0.1', silentPort]]),
      cla('dead', [['127.0.0.1', deadPort]]),
    ],
    listeners: [listener(L, 0, { rds: L, filters })],
    routes: [routeConfig(L, [vhost('www', ['www.example.com'], routes)])],
  });
  return res.nacks.map((n) => n.error_detail?.message);
}

const get = (path: string, headers: Record<string, string> = {}) =>
  httpRequest(`http://127.0.0.1:${fx.proxy.port(L)}${path}`, { host: 'www.example.com', headers });
const stat = (n: string) => fx.proxy.server.stats.value(n) ?? 0;

beforeAll(async () => {
  [app, proc, deadPort] = await Promise.all([startSampleApp(), startExtProc({ log: false }), closedPort()]);
  silent = new grpc.Server();
  silent.addService(externalProcessorService(), { Process() {} });
  silentPort = await new Promise<number>((resolve, reject) =>
    silent.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))),
  );
  fx = await startXdsFixture();
  expect(await push([])).toEqual([]);
  await fx.proxy.server.live;
});

afterAll(async () => {
  await fx?.close();
  silent?.forceShutdown();
  await Promise.all([app?.close(), proc?.close()]);
});

describe('ext_proc (headers mode)', () => {
  it('the processor’s request header mutation reaches the upstream (set, remove)', async () => {
    expect(await push([extProc('proc')])).toEqual([]);
    const r = await get('/headers?x=1', { 'x-extproc-remove': 'gone', 'x-keep': 'yes' });
    expect(r.status).toBe(200);
    const seen = JSON.parse(r.body).headers as Record<string, string[]>;
    expect(seen['X-Extproc-Seen']).toEqual(['true']);
    expect(seen['X-Extproc-Path']).toEqual(['/headers?x=1']);
    expect(seen['X-Extproc-Remove']).toBeUndefined();
    expect(seen['X-Keep']).toEqual(['yes']);
    expect(stat('http.http.ext_proc.streams_started')).toBeGreaterThanOrEqual(1);
    expect(stat('cluster.proc.upstream_rq_total')).toBeGreaterThanOrEqual(1);
  });

  it('an immediate_response answers the client: its status, headers and body', async () => {
    const r = await get('/headers', { 'x-extproc-deny': '1' });
    expect(r.status).toBe(403);
    expect(r.headers['x-extproc']).toBe('denied');
    expect(r.body).toBe('denied by ext_proc: the request carries x-extproc-deny\n');
    expect(stat('http.http.ext_proc.immediate_responses')).toBe(1);
  });

  it('disabled per route with ExtProcPerRoute', async () => {
    expect(
      await push(
        [extProc('proc')],
        [
          route('/get', APP, {
            typed_per_filter_config: {
              'envoy.filters.http.ext_proc': { '@type': `${T}ExtProcPerRoute`, disabled: true },
            },
          }),
          route('/', APP),
        ],
      ),
    ).toEqual([]);
    expect((await get('/get', { 'x-extproc-deny': '1' })).status).toBe(200);
    expect((await get('/headers', { 'x-extproc-deny': '1' })).status).toBe(403);
  });

  it('a processor that is down or silent: 500 (ext_proc_error_...), or through with failure_mode_allow', async () => {
    expect(await push([extProc('dead')])).toEqual([]);
    expect((await get('/get')).status).toBe(500);
    expect(fx.proxy.access.at(-1)).toContain('" 500 - ');
    expect(stat('http.http.ext_proc.streams_failed')).toBe(1);
    expect(await push([extProc('silent', { message_timeout: '0.2s' })])).toEqual([]);
    expect((await get('/get')).status).toBe(500);
    expect(stat('http.http.ext_proc.message_timeouts')).toBe(1);
    expect(await push([extProc('dead', { failure_mode_allow: true })])).toEqual([]);
    expect((await get('/get')).status).toBe(200);
    expect(stat('http.http.ext_proc.failure_mode_allowed')).toBe(1);
  });

  it('NACKs response header processing (the default SEND), which this proxy does not implement', async () => {
    const nacks = await push([extProc('proc', { processing_mode: {} })]);
    expect(nacks.join(' ')).toContain('response_header_mode: only SKIP is supported');
  });
});
