// Outlier detection (passive health checking) as Envoy's DetectorImpl does it for consecutive errors
// (source/common/upstream/outlier_detection_impl.cc, docs arch_overview/upstream/outlier and api
// config/cluster/v3/outlier_detection.proto): the router reports each upstream answer of a host (local-origin
// failures count as 503 for a connect failure or reset, 504 for a timeout, as with split_external_local_origin_errors
// false); `consecutive_5xx` 5xx in a row (default 5) eject the host at once, `consecutive_gateway_failure` 502/503/504
// in a row are detected (enforced at enforcing_consecutive_gateway_failure, 0% by default). An ejection is enforced
// with the enforcing_* percentage and only while the ejected share, this host included, stays within
// `max_ejection_percent` (10%; `always_eject_one_host` lets the first one through), else `ejections_overflow`.
// An ejected host is `/failed_outlier_check` and out of load balancing; every `interval` (10 s) the hosts whose
// ejection (base_ejection_time × times ejected, capped by max_ejection_time, 300 s) is over come back, and hosts not
// ejected during an interval have their ejection count decreased. Stats `cluster.<name>.outlier_detection.*`.
// Failure-percentage detection is refused when enforced; success-rate detection (which needs 5 hosts with 100
// requests each per interval) is not implemented.
import type { Logger } from '../log.ts';
import type { Counter, Gauge, StatsStore } from '../stats.ts';
import type { OutlierSpec } from './cluster-health-config.ts';
import type { Host } from './host.ts';

const COUNTERS = [
  'ejections_enforced_total',
  'ejections_overflow',
  'ejections_enforced_consecutive_5xx',
  'ejections_detected_consecutive_5xx',
  'ejections_enforced_consecutive_gateway_failure',
  'ejections_detected_consecutive_gateway_failure',
  'ejections_enforced_success_rate',
  'ejections_detected_success_rate',
  'ejections_total',
  'ejections_consecutive_5xx',
] as const;

interface Monitor {
  consecutive5xx: number;
  consecutiveGateway: number;
  numEjections: number;
  ejectedAt: number;
}

type EjectionType = 'consecutive_5xx' | 'consecutive_gateway_failure';

/** What the detector needs of its cluster. */
export interface DetectedCluster {
  readonly name: string;
  hosts(): Host[];
  onHealthChanged(): void;
}

export class OutlierDetector {
  private readonly spec: OutlierSpec;
  private readonly cluster: DetectedCluster;
  private readonly log: Logger;
  private readonly counters: Record<(typeof COUNTERS)[number], Counter>;
  private readonly active: Gauge;
  private readonly monitors = new WeakMap<Host, Monitor>();
  private readonly timer: NodeJS.Timeout;

  constructor(spec: OutlierSpec, cluster: DetectedCluster, store: StatsStore, log: Logger) {
    this.spec = spec;
    this.cluster = cluster;
    this.log = log;
    const p = `cluster.${cluster.name}.outlier_detection.`;
    this.counters = Object.fromEntries(COUNTERS.map((k) => [k, store.counter(p + k)])) as typeof this.counters;
    this.active = store.gauge(p + 'ejections_active');
    this.timer = setInterval(() => this.onInterval(), spec.intervalMs);
    this.timer.unref();
  }

  private monitor(h: Host): Monitor {
    let m = this.monitors.get(h);
    if (!m) {
      m = { consecutive5xx: 0, consecutiveGateway: 0, numEjections: 0, ejectedAt: 0 };
      this.monitors.set(h, m);
    }
    return m;
  }

  /** The router's report of one upstream answer (or local-origin failure mapped to 503/504) of a host. */
  putHttpResponseCode(h: Host, code: number): void {
    const m = this.monitor(h);
    if (code >= 500 && code < 600) {
      if (code === 502 || code === 503 || code === 504) {
        if (++m.consecutiveGateway === this.spec.consecutiveGatewayFailure)
          this.onConsecutive(h, 'consecutive_gateway_failure');
      } else m.consecutiveGateway = 0;
      if (++m.consecutive5xx === this.spec.consecutive5xx) this.onConsecutive(h, 'consecutive_5xx');
    } else {
      m.consecutive5xx = 0;
      m.consecutiveGateway = 0;
    }
  }

  private onConsecutive(h: Host, type: EjectionType): void {
    const c = this.counters;
    if (type === 'consecutive_5xx') {
      c.ejections_detected_consecutive_5xx.inc();
      c.ejections_consecutive_5xx.inc();
    } else c.ejections_detected_consecutive_gateway_failure.inc();
    if (h.flags.failedOutlierCheck) return;
    const enforcing = type === 'consecutive_5xx' ? this.spec.enforcing5xx : this.spec.enforcingGatewayFailure;
    if (Math.random() * 100 >= enforcing) return;
    const total = this.cluster.hosts().length;
    const ejected = this.active.value;
    const percent = total === 0 ? 100 : (100 * (ejected + 1)) / total;
    if (percent > this.spec.maxEjectionPercent && !(this.spec.alwaysEjectOneHost && ejected === 0)) {
      c.ejections_overflow.inc();
      return;
    }
    const m = this.monitor(h);
    m.numEjections++;
    m.ejectedAt = Date.now();
    h.flags.failedOutlierCheck = true;
    this.active.set(ejected + 1);
    c.ejections_enforced_total.inc();
    c.ejections_total.inc();
    if (type === 'consecutive_5xx') c.ejections_enforced_consecutive_5xx.inc();
    else c.ejections_enforced_consecutive_gateway_failure.inc();
    this.log.debug(`outlier detection: ejecting host ${h.key} (${type}), ejection ${m.numEjections}`);
    this.cluster.onHealthChanged();
  }

  /** Envoy's interval timer: unejects hosts whose time is up, backs off the ejection count of the others. */
  private onInterval(): void {
    const now = Date.now();
    let changed = false;
    for (const h of this.cluster.hosts()) {
      const m = this.monitors.get(h);
      if (!m) continue;
      if (h.flags.failedOutlierCheck) {
        const ms = Math.min(this.spec.baseEjectionMs * m.numEjections, this.spec.maxEjectionMs);
        if (now - m.ejectedAt >= ms) {
          h.flags.failedOutlierCheck = false;
          m.consecutive5xx = 0;
          m.consecutiveGateway = 0;
          this.active.set(Math.max(0, this.active.value - 1));
          this.log.debug(`outlier detection: unejecting host ${h.key}`);
          changed = true;
        }
      } else if (m.numEjections > 0 && now - m.ejectedAt >= this.spec.baseEjectionMs * m.numEjections) {
        m.numEjections--;
      }
    }
    if (changed) this.cluster.onHealthChanged();
  }

  /** Hosts that left the cluster no longer count as ejected. */
  setHosts(hosts: Host[]): void {
    const n = hosts.filter((h) => h.flags.failedOutlierCheck).length;
    this.active.set(n);
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
