// What the data path (connection managers, filters, the router) needs from the cluster manager: a cluster by name
// and connection ids. cluster-manager.ts implements it; the data path never sees CDS or EDS handling.
import type { Cluster } from './cluster.ts';

export interface ClusterManagerView {
  get(name: string): Cluster | undefined;
  /** Next connection id (shared by downstream and upstream connections, as in Envoy). */
  nextConnectionId(): number;
}
