// The workload controllers of the embedded cluster (what kube-controller-manager's deployment, replicaset,
// endpointslice/endpoints and service (load balancer) controllers do), each a class with start()/stop().
import type { KubeConfig } from '@kubernetes/client-node';
import type { LogRegistry } from '../../../system/shared/log.ts';
import { type ClientCredentials, KubeClient } from '../client/kube-client.ts';
import { DeploymentController } from './deployment.ts';
import { EndpointSliceController } from './endpointslice.ts';
import { LoadBalancerController, type LoadBalancerOptions } from './loadbalancer.ts';
import { ReplicaSetController } from './replicaset.ts';

export { DeploymentController, EndpointSliceController, LoadBalancerController, ReplicaSetController };

export interface WorkloadControllers {
  deployments: DeploymentController;
  replicaSets: ReplicaSetController;
  endpoints: EndpointSliceController;
  loadBalancers: LoadBalancerController;
  stop(): Promise<void>;
}

/** Starts the four controllers with one client (a privileged identity, e.g. handle.credentials({user})). */
export function startWorkloadControllers(
  identity: ClientCredentials | KubeConfig,
  logs: LogRegistry,
  lb: LoadBalancerOptions,
): WorkloadControllers {
  const client = new KubeClient(identity);
  const deployments = new DeploymentController(client, logs.logger('deployment-controller'));
  const replicaSets = new ReplicaSetController(client, logs.logger('replicaset-controller'));
  const endpoints = new EndpointSliceController(client, logs.logger('endpointslice-controller'));
  const loadBalancers = new LoadBalancerController(client, lb, logs.logger('service-lb-controller'));
  for (const c of [deployments, replicaSets, endpoints, loadBalancers]) c.start();
  return {
    deployments,
    replicaSets,
    endpoints,
    loadBalancers,
    stop: async () => {
      await Promise.all([deployments.stop(), replicaSets.stop(), endpoints.stop(), loadBalancers.stop()]);
      await client.close();
    },
  };
}
