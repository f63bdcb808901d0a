// The admin server (contract 4.1): index, /logging, /snapshots/krt, /snapshots/xds (empty without a proxy, then the
// exact resources per connected proxy with ACK state), ?pretty, /metrics (a valid Prometheus exposition, system/shared/testing/exposition.ts) and
// pprof profiles that decode as pprof.
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import * as grpc from '@grpc/grpc-js';
import { Profile } from 'pprof-format';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adsService, TYPE_URL } from '../../shared/envoy/protos.ts';
import { checkExposition } from '../../shared/testing/exposition.ts';
import type { ControlPlane } from '../controlplane.ts';
import { startOfflineControlPlane } from '../testing/control-plane.ts';

const INPUT = readFileSync(new URL('../testdata/basic/input.yaml', import.meta.url), 'utf8');
const ROLE = 'gwvendor-kube-gateway-api~gwvendor-system~debug';

let cp: ControlPlane;
let base: string;
beforeAll(async () => {
  cp = await startOfflineControlPlane(INPUT);
  base = cp.admin!.url;
});
afterAll(() => cp.stop());

const get = (path: string, init?: RequestInit) => fetch(base + path, init);

describe('admin server', () => {
  it('binds localhost', () => {
    expect(base).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it('/ is an HTML index linking every endpoint, with a log level form', async () => {
    const r = await get('/');
    expect(r.headers.get('content-type')).toContain('text/html');
    const html = await r.text();
    for (const href of ['/debug/pprof/', '/logging', '/snapshots/krt?pretty', '/snapshots/xds?pretty', '/metrics']) {
      expect(html).toContain(`href="${href}"`);
    }
    expect(html).toContain('<form method="post" action="/logging"');
    expect(html).toContain('<option value="xds">xds</option>');
  });

  it('/logging shows and sets levels, per component or all, with 400s that name the problem', async () => {
    const t = await (await get('/logging')).text();
    expect(t).toMatch(/^current log levels:\n---\n/);
    expect(t).toContain('xds: ');
    let r = await get('/logging?xds=debug', { method: 'POST' });
    expect(r.status).toBe(200);
    expect(await r.text()).toContain('xds: debug');
    r = await get('/logging?level=warning', { method: 'PUT' });
    expect(await r.text()).toMatch(/deployer: warn\n/);
    r = await get('/logging?nope=debug', { method: 'POST' });
    expect(r.status).toBe(400);
    expect(await r.text()).toMatch(/^unknown component: nope/);
    r = await get('/logging?xds=loud', { method: 'POST' });
    expect(r.status).toBe(400);
    expect(await r.text()).toMatch(/^invalid level: loud/);
    r = await get('/logging', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'component=status&level=trace',
      redirect: 'manual',
    });
    expect([r.status, r.headers.get('location')]).toEqual([303, '/logging']);
    expect(cp.logs.level('status')).toBe('trace');
  });

  it('/snapshots/krt lists every collection with outputs, inputs, dependencies and sync status; ?pretty indents', async () => {
    const r = await get('/snapshots/krt');
    const text = await r.text();
    expect(text.split('\n').length).toBeLessThan(3);
    const krt = JSON.parse(text) as {
      name: string;
      state: { outputs: Record<string, any>; inputs?: Record<string, any>; synced: boolean };
    }[];
    const by = Object.fromEntries(krt.map((c) => [c.name, c]));
    expect(Object.keys(by)).toEqual(
      expect.arrayContaining(['HTTPRoutes', 'Gateways', 'Xds', 'Snapshots', 'RouteStatuses']),
    );
    expect(krt.every((c) => c.state.synced)).toBe(true);
    expect(by.HTTPRoutes.state.outputs['sampleapp/sampleapp'].spec.hostnames).toEqual(['www.example.com']);
    expect(by.Gateways.state.inputs!['gwvendor-system/debug'].dependencies).toEqual(
      expect.arrayContaining([
        'Gateways/gwvendor-system/debug',
        'GatewayClasses/gwvendor',
        'HTTPRoutes[parentGateway=gwvendor-system/debug]',
      ]),
    );
    const pretty = await (await get('/snapshots/krt?pretty')).text();
    expect(pretty).toContain('\n  {\n    "name": ');
  });

  it('/snapshots/xds is empty with a reason until a proxy connects, then shows its resources and ACK state', async () => {
    const empty = (await (await get('/snapshots/xds')).json()) as any;
    expect(empty.data).toEqual({});
    expect(empty.reason).toMatch(/no gateway proxy is connected/);

    const Ctor = grpc.makeClientConstructor(adsService(), 'ADS') as any;
    const client = new Ctor(`127.0.0.1:${cp.ads.port}`, grpc.credentials.createInsecure());
    const call = client.StreamAggregatedResources();
    const responses: any[] = [];
    call.on('data', (d: any) => {
      responses.push(d);
      call.write({ version_info: d.version_info, type_url: d.type_url, response_nonce: d.nonce });
    });
    call.on('error', () => {});
    call.write({
      node: {
        id: 'debug-abc.gwvendor-system',
        cluster: 'debug.gwvendor-system',
        metadata: { fields: { role: { stringValue: ROLE } } },
      },
      type_url: TYPE_URL.cluster,
    });
    call.write({ type_url: TYPE_URL.listener });
    try {
      let view: any;
      for (let i = 0; i < 100; i++) {
        view = await (await get('/snapshots/xds?pretty')).json();
        const types = view.data[ROLE]?.proxies?.['debug-abc.gwvendor-system']?.types;
        if (types?.clusters?.status === 'ACKED' && types?.listeners?.status === 'ACKED') break;
        await new Promise((r) => setTimeout(r, 20));
      }
      const entry = view.data[ROLE];
      expect(entry.gateway).toBe('gwvendor-system/debug');
      expect(entry.listeners[0]).toMatchObject({ '@type': TYPE_URL.listener, name: 'listener~8080' });
      expect(entry.routes[0].virtual_hosts[0].domains).toEqual(['www.example.com']);
      expect(entry.clusters.map((c: any) => c.name)).toEqual(['kube_sampleapp_sampleapp_8000']);
      expect(entry.endpoints[0].cluster_name).toBe('kube_sampleapp_sampleapp_8000');
      expect(entry.proxies['debug-abc.gwvendor-system'].types.clusters).toMatchObject({
        status: 'ACKED',
        version_acked: '1',
      });
      expect(entry.type_versions).toEqual({ clusters: '1', endpoints: '1', listeners: '1', routes: '1' });
      // The rendering is what went on the wire: decoding the bytes the client received gives the same listener.
      const { unpackAny } = await import('../../shared/envoy/protojson.ts');
      const lds = responses.find((r) => r.type_url === TYPE_URL.listener);
      expect(unpackAny(lds.resources[0])).toEqual(entry.listeners[0]);
    } finally {
      call.end();
      client.close();
    }
  });

  it('/metrics is Prometheus text with translation, krt, xDS and process metrics', async () => {
    const r = await get('/metrics');
    expect(r.headers.get('content-type')).toContain('text/plain');
    const text = await r.text();
    for (const m of [
      'gwvendor_translations_total{stage="gateway"}',
      'gwvendor_translation_duration_seconds_bucket',
      'gwvendor_krt_recomputations_total{collection="Gateways"}',
      'gwvendor_xds_connected_proxies',
      'gwvendor_xds_pushes_total',
      'gwvendor_xds_acks_total',
      'process_resident_memory_bytes',
    ]) {
      expect(text).toContain(m);
    }
    expect(checkExposition(text)).toEqual([]);
  });

  it('/debug/pprof lists the profiles, and each downloads in pprof format', async () => {
    const index = await (await get('/debug/pprof/')).text();
    for (const p of ['profile?seconds=10', 'heap', 'handles']) expect(index).toContain(`href="${p}"`);
    const decode = async (path: string) => {
      const r = await get(path);
      expect(r.status, path).toBe(200);
      const buf = Buffer.from(await r.arrayBuffer());
      expect(buf.subarray(0, 2)).toEqual(Buffer.from([0x1f, 0x8b]));
      return Profile.decode(gunzipSync(buf));
    };
    const types = (p: Profile) =>
      p.sampleType.map((t) => `${p.stringTable.strings[Number(t.type)]}/${p.stringTable.strings[Number(t.unit)]}`);
    const cpu = await decode('/debug/pprof/profile?seconds=1');
    expect(types(cpu)).toEqual(expect.arrayContaining(['wall/nanoseconds']));
    expect(cpu.sample.length).toBeGreaterThan(0);
    const heap = await decode('/debug/pprof/heap');
    expect(types(heap)).toEqual(['inuse_objects/count', 'inuse_space/bytes']);
    expect(heap.sample.length).toBeGreaterThan(0);
    const handles = await decode('/debug/pprof/handles');
    expect(types(handles)).toEqual(['handles/count']);
    expect(handles.function.map((f) => handles.stringTable.strings[Number(f.name)])).toEqual(
      expect.arrayContaining(['TCPServerWrap']),
    );
    expect((await get('/debug/pprof/profile?seconds=500')).status).toBe(400);
  });
});
