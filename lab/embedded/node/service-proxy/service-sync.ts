// The node's view of Services (kube-proxy and CoreDNS roles): Services and their EndpointSlices from the API server
// become ServiceProxy relays (ClusterIP and LoadBalancer IP, ready endpoints only) and cluster DNS records.

import type { KObject } from '../../../../system/shared/kobject.ts';
import type { Logger } from '../../../../system/shared/log.ts';
import type { KubeClient } from '../../client/kube-client.ts';
import { Informer, ListWatch, namespacedName } from '../../client/list-watch.ts';
import type { ClusterDns } from '../dns/cluster-dns.ts';
import type { EndpointAddress, ServiceProxy } from './service-proxy.ts';

export interface ServiceSyncOptions {
  client: KubeClient;
  proxy: ServiceProxy;
  dns: ClusterDns;
  log: Logger;
}

export class ServiceSync {
  private readonly opts: ServiceSyncOptions;
  private readonly serviceInformer: Informer;
  private readonly services: Map<string, any>;
  /** service key → slice uid → slice */
  private readonly slices = new Map<string, Map<string, any>>();
  private watches: (Informer | ListWatch)[] = [];
  private readonly pending = new Set<string>();
  private timer?: NodeJS.Timeout;
  private synced = { services: false, slices: false };

  constructor(opts: ServiceSyncOptions) {
    this.opts = opts;
    this.serviceInformer = new Informer(opts.client, '/api/v1/services', opts.log, {
      onEvent: (type, o) => {
        if (type === 'SYNC') this.synced.services = true;
        else if (o) this.enqueue(namespacedName(o));
      },
    });
    this.services = this.serviceInformer.store;
  }

  start(): void {
    const eps = new ListWatch(
      this.opts.client,
      '/apis/discovery.k8s.io/v1/endpointslices',
      (type, o) => {
        if (type === 'SYNC') {
          this.synced.slices = true;
          return;
        }
        if (!o) return;
        const svcName = (o.metadata as any).labels?.['kubernetes.io/service-name'];
        if (!svcName) return;
        const key = `${o.metadata.namespace}/${svcName}`;
        let m = this.slices.get(key);
        if (!m) {
          m = new Map();
          this.slices.set(key, m);
        }
        if (type === 'DELETED') m.delete(o.metadata.uid);
        else m.set(o.metadata.uid, o);
        this.enqueue(key);
      },
      this.opts.log,
    );
    this.watches = [this.serviceInformer, eps];
    for (const w of this.watches) w.start();
  }

  stop(): void {
    for (const w of this.watches) w.stop();
    clearTimeout(this.timer);
  }

  /** Whether both lists have been read once (tests wait on it). */
  get ready(): boolean {
    return this.synced.services && this.synced.slices;
  }

  private enqueue(key: string): void {
    this.pending.add(key);
    // Coalesce a burst (a Service and its slice arrive together).
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      const keys = [...this.pending];
      this.pending.clear();
      for (const k of keys) void this.sync(k);
    }, 5);
  }

  private async sync(key: string): Promise<void> {
    const [namespace, name] = key.split('/');
    const svc = this.services.get(key);
    if (!svc || svc.spec?.type === 'ExternalName') {
      this.opts.dns.removeService(namespace, name);
      await this.opts.proxy.remove(namespace, name);
      return;
    }
    const endpoints: Record<string, EndpointAddress[]> = {};
    const readyIPs = new Set<string>();
    for (const slice of this.slices.get(key)?.values() ?? []) {
      for (const p of slice.ports ?? []) {
        endpoints[p.name ?? ''] ??= [];
        const list = endpoints[p.name ?? ''];
        for (const e of slice.endpoints ?? []) {
          if (e.conditions?.ready === false) continue;
          for (const ip of e.addresses ?? []) {
            list.push({ ip, port: p.port });
            readyIPs.add(ip);
          }
        }
      }
    }
    const ports = (svc.spec?.ports ?? []).map((p: any) => ({ name: p.name ?? '', port: p.port, protocol: p.protocol }));
    const clusterIP = svc.spec?.clusterIP;
    this.opts.dns.upsertService({ namespace, name, clusterIP, endpoints: [...readyIPs], ports });
    try {
      await this.opts.proxy.apply({
        namespace,
        name,
        clusterIP,
        loadBalancerIP: svc.spec?.type === 'LoadBalancer' ? (svc.status?.loadBalancer?.ingress?.[0]?.ip ?? null) : null,
        ports,
        endpoints,
      });
    } catch (err) {
      this.opts.log.warn('service proxy update failed', { service: key, err: err as Error });
    }
  }

  /** The objects seen (for dumps). */
  objects(): KObject[] {
    return [...this.services.values()];
  }
}
