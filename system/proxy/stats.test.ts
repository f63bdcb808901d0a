// Unit tests of the stats store: Envoy's default tag extraction and the /stats text, JSON and Prometheus renderings.
import { describe, expect, it } from 'vitest';
import { compileRe2 } from '../shared/regex.ts';
import { checkExposition } from '../shared/testing/exposition.ts';
import { extractTags, renderJson, renderPrometheus, renderText, StatsStore } from './stats.ts';

describe('tag extraction (Envoy default tag specifiers)', () => {
  it('cluster name, response code and code class, in Envoy label order', () => {
    expect(extractTags('cluster.kube_sampleapp_sampleapp_8000.upstream_rq_total')).toEqual({
      extracted: 'cluster.upstream_rq_total',
      tags: [{ name: 'envoy.cluster_name', value: 'kube_sampleapp_sampleapp_8000' }],
    });
    expect(extractTags('cluster.c1.upstream_rq_2xx')).toEqual({
      extracted: 'cluster.upstream_rq_xx',
      tags: [
        { name: 'envoy.response_code_class', value: '2' },
        { name: 'envoy.cluster_name', value: 'c1' },
      ],
    });
    expect(extractTags('cluster.c1.upstream_rq_503')).toEqual({
      extracted: 'cluster.upstream_rq',
      tags: [
        { name: 'envoy.response_code', value: '503' },
        { name: 'envoy.cluster_name', value: 'c1' },
      ],
    });
  });

  it('HCM prefix, listener address (IPv4 with dots), admin listener excluded', () => {
    expect(extractTags('http.http.downstream_rq_total')).toEqual({
      extracted: 'http.downstream_rq_total',
      tags: [{ name: 'envoy.http_conn_manager_prefix', value: 'http' }],
    });
    expect(extractTags('listener.0.0.0.0_8080.downstream_cx_total')).toEqual({
      extracted: 'listener.downstream_cx_total',
      tags: [{ name: 'envoy.listener_address', value: '0.0.0.0_8080' }],
    });
    expect(extractTags('listener.0.0.0.0_8080.http.http.downstream_rq_2xx').tags).toEqual([
      { name: 'envoy.response_code_class', value: '2' },
      { name: 'envoy.http_conn_manager_prefix', value: 'http' },
      { name: 'envoy.listener_address', value: '0.0.0.0_8080' },
    ]);
    expect(extractTags('listener.admin.downstream_cx_total')).toEqual({
      extracted: 'listener.admin.downstream_cx_total',
      tags: [],
    });
  });

  it('RDS route config names (Envoy only tags names made of [\\w-.])', () => {
    expect(extractTags('http.ingress.rds.my_routes.update_success')).toEqual({
      extracted: 'http.rds.update_success',
      tags: [
        { name: 'envoy.rds_route_config', value: 'my_routes' },
        { name: 'envoy.http_conn_manager_prefix', value: 'ingress' },
      ],
    });
    expect(extractTags('http.http.rds.listener~8080.update_success').extracted).toBe(
      'http.rds.listener~8080.update_success',
    );
  });

  it('local rate limit, ext_authz and fault prefixes; untagged server stats', () => {
    expect(extractTags('rl.http_local_rate_limit.rate_limited')).toEqual({
      extracted: 'http_local_rate_limit.rate_limited',
      tags: [{ name: 'envoy.local_http_ratelimit_prefix', value: 'rl' }],
    });
    expect(extractTags('http.http.ext_authz.denied').extracted).toBe('http.ext_authz.denied');
    expect(extractTags('http.http.fault.aborts_injected').extracted).toBe('http.fault.aborts_injected');
    expect(extractTags('server.live')).toEqual({ extracted: 'server.live', tags: [] });
    expect(extractTags('control_plane.connected_state').tags).toEqual([]);
  });
});

function sampleStore(): StatsStore {
  const s = new StatsStore();
  s.counter('cluster.kube_sampleapp_sampleapp_8000.upstream_rq_total').inc(5);
  s.counter('cluster.kube_sampleapp_sampleapp_8000.upstream_rq_2xx').inc(5);
  s.counter('cluster.other.upstream_rq_5xx').inc(1);
  s.counter('http.http.downstream_rq_total').inc(5);
  s.counter('listener.0.0.0.0_8080.downstream_cx_total').inc(1);
  s.counter('cluster_manager.cds.update_success').inc(2);
  s.counter('listener_manager.lds.update_rejected');
  s.gauge('server.live').set(1);
  s.gauge('control_plane.connected_state').set(1);
  const h = s.histogram('cluster.kube_sampleapp_sampleapp_8000.upstream_rq_time');
  for (const v of [1, 2, 3, 40, 700]) h.record(v);
  s.histogram('http.http.downstream_rq_time');
  return s;
}

describe('/stats/prometheus', () => {
  it('prints Envoy metric families: counters, then gauges, then histograms, one # TYPE per family', () => {
    const text = renderPrometheus(sampleStore());
    const lines = text.trim().split('\n');
    expect(lines).toContain('# TYPE envoy_cluster_upstream_rq_total counter');
    expect(lines).toContain('envoy_cluster_upstream_rq_total{envoy_cluster_name="kube_sampleapp_sampleapp_8000"} 5');
    expect(lines).toContain(
      'envoy_cluster_upstream_rq_xx{envoy_response_code_class="2",envoy_cluster_name="kube_sampleapp_sampleapp_8000"} 5',
    );
    expect(lines).toContain('envoy_http_downstream_rq_total{envoy_http_conn_manager_prefix="http"} 5');
    expect(lines).toContain('envoy_listener_downstream_cx_total{envoy_listener_address="0.0.0.0_8080"} 1');
    expect(lines).toContain('envoy_cluster_manager_cds_update_success 2');
    expect(lines).toContain('envoy_listener_manager_lds_update_rejected 0');
    expect(lines).toContain('# TYPE envoy_server_live gauge');
    expect(lines).toContain('envoy_server_live 1');
    expect(lines).toContain('envoy_control_plane_connected_state 1');
    expect(lines).toContain('# TYPE envoy_cluster_upstream_rq_time histogram');
    expect(lines).toContain(
      'envoy_cluster_upstream_rq_time_bucket{envoy_cluster_name="kube_sampleapp_sampleapp_8000",le="0.5"} 0',
    );
    expect(lines).toContain(
      'envoy_cluster_upstream_rq_time_bucket{envoy_cluster_name="kube_sampleapp_sampleapp_8000",le="5"} 3',
    );
    expect(lines).toContain(
      'envoy_cluster_upstream_rq_time_bucket{envoy_cluster_name="kube_sampleapp_sampleapp_8000",le="+Inf"} 5',
    );
    expect(lines).toContain(
      'envoy_cluster_upstream_rq_time_sum{envoy_cluster_name="kube_sampleapp_sampleapp_8000"} 746',
    );
    expect(lines).toContain(
      'envoy_cluster_upstream_rq_time_count{envoy_cluster_name="kube_sampleapp_sampleapp_8000"} 5',
    );
    expect(text).not.toContain('# HELP');
    const firstGauge = lines.findIndex((l) => l.endsWith(' gauge'));
    const lastCounter = lines.map((l) => l.endsWith(' counter')).lastIndexOf(true);
    const firstHisto = lines.findIndex((l) => l.endsWith(' histogram'));
    expect(lastCounter).toBeLessThan(firstGauge);
    expect(firstGauge).toBeLessThan(firstHisto);
    const families = lines.filter((l) => l.startsWith('# TYPE')).map((l) => l.split(' ')[2]);
    expect(new Set(families).size).toBe(families.length);
  });

  it('is a valid exposition: syntax, one TYPE per family, unique series, consistent histograms', () => {
    expect(checkExposition(renderPrometheus(sampleStore()))).toEqual([]);
    expect(checkExposition(renderPrometheus(sampleStore(), { usedOnly: true }))).toEqual([]);
  });

  it('filters with an RE2 regex and usedonly', () => {
    const s = sampleStore();
    const text = renderPrometheus(s, { filter: compileRe2('upstream_rq_total') });
    expect(text.trim().split('\n')).toEqual([
      '# TYPE envoy_cluster_upstream_rq_total counter',
      'envoy_cluster_upstream_rq_total{envoy_cluster_name="kube_sampleapp_sampleapp_8000"} 5',
    ]);
    expect(renderPrometheus(s, { usedOnly: true })).not.toContain('lds_update_rejected');
  });
});

describe('/stats text and JSON', () => {
  it('text: name: value sorted, histograms with quantiles', () => {
    const text = renderText(sampleStore());
    const lines = text.trim().split('\n');
    expect(lines).toContain('cluster.kube_sampleapp_sampleapp_8000.upstream_rq_total: 5');
    expect(lines).toContain('server.live: 1');
    const scalars = lines.filter((l) => !l.includes('P0(') && !l.includes('No recorded values'));
    expect(scalars).toEqual([...scalars].sort());
    expect(lines.find((l) => l.startsWith('cluster.kube_sampleapp_sampleapp_8000.upstream_rq_time:'))).toMatch(
      /P0\(1,1\) P25\(/,
    );
    expect(lines).toContain('http.http.downstream_rq_time: No recorded values');
  });

  it('json: {stats:[{name,value}...,{histograms:{supported_quantiles, computed_quantiles}}]}', () => {
    const j = renderJson(sampleStore()) as { stats: Array<Record<string, any>> };
    expect(j.stats).toContainEqual({ name: 'server.live', value: 1 });
    const h = j.stats.at(-1)!.histograms;
    expect(h.supported_quantiles).toEqual([0, 25, 50, 75, 90, 95, 99, 99.5, 99.9, 100]);
    const q = h.computed_quantiles.find(
      (x: { name: string }) => x.name.endsWith('upstream_rq_time') && x.name.startsWith('cluster'),
    );
    expect(q.values[0]).toEqual({ interval: 1, cumulative: 1 });
    expect(q.values[9]).toEqual({ interval: 700, cumulative: 700 });
  });
});
