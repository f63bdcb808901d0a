// GET /clusters: per cluster its circuit breakers and per host its stats, health flags and locality, in Envoy's
// text form (`<cluster>::<host>::<stat>::<value>`) or as envoy.admin.v3.Clusters JSON; health flags as Envoy prints
// them (`/failed_active_hc`, `/failed_outlier_check`, ...: source/server/admin/clusters_handler.cc, host_utility.cc).
import { canonicalize } from '../../shared/envoy/protojson.ts';
import type { ServerInstance } from '../server-instance.ts';
import type { Cluster } from '../upstream/cluster.ts';
import type { Host } from '../upstream/host.ts';

type J = Record<string, any>;

/** Envoy's HostUtility::healthFlagsToString, in its order; `healthy` when no flag is set. */
function healthFlags(h: Host): string {
  const f = h.flags;
  let out = '';
  if (f.failedActiveHc) out += '/failed_active_hc';
  if (f.failedOutlierCheck) out += '/failed_outlier_check';
  if (h.health === 'UNHEALTHY' || h.health === 'DRAINING' || h.health === 'TIMEOUT') out += '/failed_eds_health';
  if (h.health === 'DEGRADED') out += '/degraded_eds_health';
  if (f.pendingActiveHc) out += '/pending_active_hc';
  if (f.activeHcTimeout) out += '/active_hc_timeout';
  if (h.health === 'DRAINING') out += '/eds_status_draining';
  return out || 'healthy';
}

function ordered(srv: ServerInstance): Cluster[] {
  return srv.clusters.all().sort((a, b) => (a.name < b.name ? -1 : 1));
}

export function clustersText(srv: ServerInstance): string {
  const out: string[] = [];
  for (const c of ordered(srv)) {
    const t = c.spec.thresholds;
    const n = c.name;
    out.push(`${n}::observability_name::${n}`);
    if (c.outlier) {
      for (const k of [
        'success_rate_average',
        'success_rate_ejection_threshold',
        'local_origin_success_rate_average',
        'local_origin_success_rate_ejection_threshold',
      ])
        out.push(`${n}::outlier::${k}::-1`);
    }
    for (const p of ['default_priority', 'high_priority']) {
      out.push(`${n}::${p}::max_connections::${t.maxConnections}`);
      out.push(`${n}::${p}::max_pending_requests::${t.maxPendingRequests}`);
      out.push(`${n}::${p}::max_requests::${t.maxRequests}`);
      out.push(`${n}::${p}::max_retries::${t.maxRetries}`);
    }
    out.push(`${n}::added_via_api::${c.addedViaApi}`);
    if (c.spec.edsServiceName !== n) out.push(`${n}::eds_service_name::${c.spec.edsServiceName}`);
    for (const h of c.hosts) {
      const k = `${n}::${h.key}`;
      const s = h.stats;
      out.push(`${k}::cx_active::${s.cx_active}`);
      out.push(`${k}::cx_connect_fail::${s.cx_connect_fail}`);
      out.push(`${k}::cx_total::${s.cx_total}`);
      out.push(`${k}::rq_active::${s.rq_active}`);
      out.push(`${k}::rq_error::${s.rq_error}`);
      out.push(`${k}::rq_success::${s.rq_success}`);
      out.push(`${k}::rq_timeout::${s.rq_timeout}`);
      out.push(`${k}::rq_total::${s.rq_total}`);
      out.push(`${k}::hostname::${h.hostname}`);
      out.push(`${k}::health_flags::${healthFlags(h)}`);
      out.push(`${k}::weight::${h.weight}`);
      out.push(`${k}::region::${h.locality?.region ?? ''}`);
      out.push(`${k}::zone::${h.locality?.zone ?? ''}`);
      out.push(`${k}::sub_zone::${h.locality?.sub_zone ?? ''}`);
      out.push(`${k}::canary::false`);
      out.push(`${k}::priority::${h.priority}`);
      out.push(`${k}::success_rate::-1`);
      out.push(`${k}::local_origin_success_rate::-1`);
    }
  }
  return out.length ? out.join('\n') + '\n' : '';
}

export function clustersJson(srv: ServerInstance): J {
  const statuses = ordered(srv).map((c) => {
    const t = c.spec.thresholds;
    const thresholds = ['DEFAULT', 'HIGH'].map((priority) => ({
      priority,
      max_connections: t.maxConnections,
      max_pending_requests: t.maxPendingRequests,
      max_requests: t.maxRequests,
      max_retries: t.maxRetries,
    }));
    return {
      name: c.name,
      added_via_api: c.addedViaApi,
      observability_name: c.name,
      ...(c.spec.edsServiceName !== c.name ? { eds_service_name: c.spec.edsServiceName } : {}),
      circuit_breakers: { thresholds },
      host_statuses: c.hosts.map((h) => ({
        address: { socket_address: { address: h.address, port_value: h.port } },
        stats: [
          { name: 'cx_connect_fail', value: String(h.stats.cx_connect_fail) },
          { name: 'cx_total', value: String(h.stats.cx_total) },
          { name: 'rq_error', value: String(h.stats.rq_error) },
          { name: 'rq_success', value: String(h.stats.rq_success) },
          { name: 'rq_timeout', value: String(h.stats.rq_timeout) },
          { name: 'rq_total', value: String(h.stats.rq_total) },
          { type: 'GAUGE', name: 'cx_active', value: String(h.stats.cx_active) },
          { type: 'GAUGE', name: 'rq_active', value: String(h.stats.rq_active) },
        ],
        health_status: {
          eds_health_status: h.health,
          ...(h.flags.failedActiveHc ? { failed_active_health_check: true } : {}),
          ...(h.flags.failedOutlierCheck ? { failed_outlier_check: true } : {}),
          ...(h.flags.pendingActiveHc ? { pending_active_hc: true } : {}),
          ...(h.flags.activeHcTimeout ? { active_hc_timeout: true } : {}),
        },
        weight: h.weight,
        hostname: h.hostname,
        locality: h.locality ?? {},
        priority: h.priority,
      })),
    };
  });
  // Envoy prints /clusters?format=json with always_print_primitive_fields.
  return canonicalize('envoy.admin.v3.Clusters', { cluster_statuses: statuses }, { emitDefaults: true });
}
