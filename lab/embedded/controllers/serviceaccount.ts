// Every active namespace gets a `default` ServiceAccount and the `kube-root-ca.crt` ConfigMap (the cluster CA that
// in-cluster clients verify the API server with), and gets them back when they are deleted.

import type { KObject } from '../../../system/shared/kobject.ts';
import type { Logger } from '../../../system/shared/log.ts';
import { type KubeClient, KubeError } from '../client/kube-client.ts';
import { Informer, ListWatch } from '../client/list-watch.ts';

export class ServiceAccountController {
  private readonly client: KubeClient;
  private readonly log: Logger;
  private readonly caPem: string;
  private watches: (Informer | ListWatch)[] = [];
  private namespaces = new Map<string, KObject>();

  constructor(client: KubeClient, caPem: string, log: Logger) {
    this.client = client;
    this.caPem = caPem;
    this.log = log;
  }

  start(): void {
    const ns = new Informer(this.client, '/api/v1/namespaces', this.log, {
      onEvent: (type, o) => {
        if (o && type !== 'DELETED') void this.ensure(o.metadata.name);
      },
    });
    this.namespaces = ns.store;
    const sa = new ListWatch(
      this.client,
      '/api/v1/serviceaccounts?fieldSelector=metadata.name%3Ddefault',
      (type, o) => {
        if (type === 'DELETED' && o?.metadata.namespace) void this.ensure(o.metadata.namespace);
      },
      this.log,
    );
    const cm = new ListWatch(
      this.client,
      '/api/v1/configmaps?fieldSelector=metadata.name%3Dkube-root-ca.crt',
      (type, o) => {
        if ((type === 'DELETED' || type === 'MODIFIED') && o?.metadata.namespace)
          void this.ensure(o.metadata.namespace);
      },
      this.log,
    );
    this.watches = [ns, sa, cm];
    for (const w of this.watches) w.start();
  }

  async stop(): Promise<void> {
    for (const w of this.watches) w.stop();
  }

  private async ensure(namespace: string): Promise<void> {
    const ns = this.namespaces.get(namespace);
    if (!ns || ns.metadata.deletionTimestamp) return;
    const create = async (path: string, obj: unknown) => {
      try {
        await this.client.request('POST', path, obj);
      } catch (e) {
        if (e instanceof KubeError && (e.code === 409 || e.code === 403 || e.code === 404)) return;
        this.log.warn('create failed', { path, err: e as Error });
      }
    };
    await create(`/api/v1/namespaces/${namespace}/serviceaccounts`, {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: 'default', namespace },
    });
    try {
      const cm = await this.client.request('GET', `/api/v1/namespaces/${namespace}/configmaps/kube-root-ca.crt`);
      if (cm.data?.['ca.crt'] !== this.caPem)
        await this.client.request('PUT', `/api/v1/namespaces/${namespace}/configmaps/kube-root-ca.crt`, {
          ...cm,
          data: { 'ca.crt': this.caPem },
        });
    } catch (e) {
      if (!(e instanceof KubeError && e.code === 404)) return;
      await create(`/api/v1/namespaces/${namespace}/configmaps`, {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: {
          name: 'kube-root-ca.crt',
          namespace,
          annotations: {
            'kubernetes.io/description':
              'Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters.',
          },
        },
        data: { 'ca.crt': this.caPem },
      });
    }
  }
}
