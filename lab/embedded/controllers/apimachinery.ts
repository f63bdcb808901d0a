// The API-machinery controllers of the embedded cluster (what kube-controller-manager's namespace, garbage-collector,
// service-account and root-ca-cert-publisher controllers do), each a class with start()/stop().
import type { KubeConfig } from '@kubernetes/client-node';
import type { LogRegistry } from '../../../system/shared/log.ts';
import { type ClientCredentials, KubeClient } from '../client/kube-client.ts';
import { GarbageCollector } from './garbagecollector.ts';
import { NamespaceController } from './namespace.ts';
import { ServiceAccountController } from './serviceaccount.ts';

export { GarbageCollector, NamespaceController, ServiceAccountController };

export interface ApiMachinery {
  gc: GarbageCollector;
  namespaces: NamespaceController;
  serviceAccounts: ServiceAccountController;
  stop(): Promise<void>;
}

/** Starts the three controllers with one client (a privileged identity, e.g. from handle.credentials({user})). */
export async function startApiMachinery(
  identity: ClientCredentials | KubeConfig,
  logs: LogRegistry,
): Promise<ApiMachinery> {
  const client = new KubeClient(identity);
  const caPem = client.credentials.caPem ?? '';
  const gc = new GarbageCollector(client, logs.logger('garbage-collector'));
  const namespaces = new NamespaceController(client, logs.logger('namespace-controller'));
  const serviceAccounts = new ServiceAccountController(client, caPem, logs.logger('serviceaccount-controller'));
  namespaces.start();
  serviceAccounts.start();
  await gc.start();
  return {
    gc,
    namespaces,
    serviceAccounts,
    stop: async () => {
      await Promise.all([gc.stop(), namespaces.stop(), serviceAccounts.stop()]);
      await client.close();
    },
  };
}
