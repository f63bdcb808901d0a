// An upstream host (Envoy's HostImpl): its address, the health, weight, priority, locality and metadata its
// endpoint carries (updated in place when an endpoint set keeps the address), the health flags active health
// checking and outlier detection set on it (Envoy's Host::HealthFlag: FAILED_ACTIVE_HC, PENDING_ACTIVE_HC,
// ACTIVE_HC_TIMEOUT, FAILED_OUTLIER_CHECK), its per-host stats for /clusters, and the smooth weighted round robin
// state the load balancer keeps on it.
import net from 'node:net';
import type { EndpointSpec, HealthStatus } from './cluster-config.ts';

type J = Record<string, any>;

export class Host {
  readonly address: string;
  readonly port: number;
  readonly key: string;
  // What the endpoint carries (update() sets them, from the constructor on).
  hostname!: string;
  health!: HealthStatus;
  weight!: number;
  priority!: number;
  locality: J | undefined;
  metadata: J | undefined;
  readonly stats = {
    cx_total: 0,
    cx_active: 0,
    cx_connect_fail: 0,
    rq_total: 0,
    rq_active: 0,
    rq_error: 0,
    rq_success: 0,
    rq_timeout: 0,
  };
  /** Smooth weighted round robin state. */
  current = 0;
  /** Health flags set by the active health checker (health-checker.ts) and the outlier detector. */
  readonly flags = { failedActiveHc: false, pendingActiveHc: false, activeHcTimeout: false, failedOutlierCheck: false };

  constructor(e: EndpointSpec) {
    this.address = e.address;
    this.port = e.port;
    this.key = net.isIPv6(e.address) ? `[${e.address}]:${e.port}` : `${e.address}:${e.port}`;
    this.update(e);
  }

  /** The endpoint at this address again, in a new assignment: what it carries changes in place. */
  update(e: EndpointSpec): void {
    this.health = e.health;
    this.weight = e.weight;
    this.priority = e.priority;
    this.hostname = e.hostname;
    this.locality = e.locality;
    this.metadata = e.metadata;
  }

  /** Healthy as Envoy's Host::coarseHealth: the EDS status, then no active health check or outlier failure. */
  get healthy(): boolean {
    if (this.flags.failedActiveHc || this.flags.failedOutlierCheck) return false;
    return this.health === 'HEALTHY' || this.health === 'UNKNOWN';
  }
}
