import type { Cluster } from './cluster.ts';

/** What the data path needs from the cluster manager. */
export interface ClusterManagerView {
  get(name: string): Cluster | undefined;
  /** Next connection id (shared by downstream and upstream connections, as in Envoy). */
  nextConnectionId(): number;
}

export type HealthStatus = 'UNKNOWN' | 'HEALTHY' | 'UNHEALTHY' | 'DRAINING' | 'TIMEOUT' | 'DEGRADED';
