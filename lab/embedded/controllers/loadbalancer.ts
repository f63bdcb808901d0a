// LoadBalancer Services get `status.loadBalancer.ingress[0].ip` on a host-reachable loopback address
// (127.<lbOctet>.x.y) after a short, configurable delay (a new cloud load balancer is not there at once either), and
// the ServiceProxy serves that address. A Service asking for an address (spec.loadBalancerIP: a Gateway's static
// address) gets it when it is in the lab's range and free; otherwise it gets none, a `AddressesAllocated=False
// AddressNotUsable` condition naming why, and a Warning event — the rules of a cloud load balancer, on loopback. Ports the proxy could not bind as written are recorded in the annotation
// `gwlab.dev/lb-port-<p>: "<p+8000>"` and an event, which the lab's helpers read.

import { namespacedName } from '../../../system/shared/kube/list-watch.ts';
import type { Logger } from '../../../system/shared/log.ts';
import { EventRecorder } from '../client/events.ts';
import { type KubeClient, KubeError } from '../client/kube-client.ts';
import { AddressPool } from '../ipam.ts';
import { type BindEvent, lbPortAnnotation } from '../node/service-proxy/service-proxy.ts';
import { Controller } from './controller.ts';

export interface LoadBalancerOptions {
  /** Second octet of the lab's LoadBalancer range. */
  lbOctet: number;
  /** Delay before a new LoadBalancer gets its address (default 1000 ms). */
  provisionDelayMs?: number;
}

export class LoadBalancerController extends Controller {
  private readonly opts: LoadBalancerOptions;
  private readonly events: EventRecorder;
  private readonly pool: AddressPool;
  private readonly services = this.informer('/api/v1/services', {
    onEvent: (type, o) => {
      if (type === 'SYNC') this.firstSync();
      else if (type === 'DELETED') this.forget(namespacedName(o));
      else if (o && this.synced) this.queue.add(namespacedName(o));
    },
  });
  private readonly assigned = new Map<string, string>();
  private readonly provisioning = new Set<string>();
  /** service key → port → bind outcome, from the ServiceProxy. */
  private readonly binds = new Map<string, Map<number, BindEvent>>();
  private synced = false;

  constructor(client: KubeClient, opts: LoadBalancerOptions, log: Logger) {
    super(client, log, { what: 'load balancer', field: 'service' });
    this.opts = opts;
    this.events = new EventRecorder(client, { component: 'service-controller' }, log);
    this.pool = new AddressPool(opts.lbOctet);
  }

  /** After the first list: addresses held by existing Services survive a lab restart; then every Service is synced. */
  private firstSync(): void {
    if (this.synced) return;
    this.synced = true;
    for (const s of this.services.values()) {
      const ip = s.status?.loadBalancer?.ingress?.[0]?.ip;
      if (ip && s.spec?.type === 'LoadBalancer' && this.pool.claim(ip)) {
        this.assigned.set(`${s.metadata.namespace}/${s.metadata.name}`, ip);
      }
    }
    for (const k of this.services.keys()) this.queue.add(k);
  }

  /** A deleted Service gives its address back. */
  private forget(key: string): void {
    const ip = this.assigned.get(key);
    if (ip) this.pool.release(ip);
    this.assigned.delete(key);
    this.binds.delete(key);
  }

  /** Feed of ServiceProxy 'bind' events (the lab process wires `proxy.on('bind', lb.onBind)`). */
  onBind = (e: BindEvent): void => {
    if (e.kind !== 'loadBalancer') return;
    const key = `${e.namespace}/${e.name}`;
    let m = this.binds.get(key);
    if (!m) {
      m = new Map();
      this.binds.set(key, m);
    }
    m.set(e.port, e);
    const svc = {
      kind: 'Service',
      apiVersion: 'v1',
      metadata: this.services.get(key)?.metadata ?? { name: e.name, namespace: e.namespace, uid: '' },
    };
    if (e.error) {
      void this.events.record(
        svc,
        'Warning',
        'LoadBalancerPortFailed',
        `cannot serve port ${e.port} on ${e.ip}: ${e.error}`,
      );
    } else if (e.fallback) {
      void this.events.record(
        svc,
        'Warning',
        'LoadBalancerPortFallback',
        `port ${e.port} cannot be bound on ${e.ip} (${e.reason ?? 'bind error'}): serving it on ${e.boundPort}; annotation ${lbPortAnnotation(e.port)}`,
      );
    }
    this.queue.add(key);
  };

  protected async sync(key: string): Promise<void> {
    const svc = this.services.get(key);
    if (!svc) return;
    const ns = svc.metadata.namespace;
    const path = `/api/v1/namespaces/${ns}/services/${svc.metadata.name}`;
    const isLB = svc.spec?.type === 'LoadBalancer';
    const current = svc.status?.loadBalancer?.ingress?.[0]?.ip;
    if (!isLB) {
      if (current && this.pool.contains(current)) {
        this.pool.release(current);
        this.assigned.delete(key);
        await this.patch(`${path}/status`, { status: { loadBalancer: {} } });
      }
      return;
    }
    const requested: string | undefined = svc.spec?.loadBalancerIP || undefined;
    if (requested) {
      if (!(await this.syncRequested(key, svc, path, requested, current))) return;
    } else if (allocatedCondition(svc)) {
      // No longer asking for an address: the refusal goes (a dynamic address follows below).
      await this.patch(`${path}/status`, { status: { conditions: null } });
    }
    if (!current && !requested) {
      if (this.provisioning.has(key)) return;
      this.provisioning.add(key);
      const ip = this.assigned.get(key) ?? this.pool.allocate();
      this.assigned.set(key, ip);
      void this.events.record(
        { ...svc, kind: 'Service', apiVersion: 'v1' },
        'Normal',
        'EnsuringLoadBalancer',
        'Ensuring load balancer',
      );
      setTimeout(() => {
        void (async () => {
          try {
            await this.patch(`${path}/status`, { status: { loadBalancer: { ingress: [{ ip, ipMode: 'VIP' }] } } });
            void this.events.record(
              { ...svc, kind: 'Service', apiVersion: 'v1' },
              'Normal',
              'EnsuredLoadBalancer',
              'Ensured load balancer',
            );
          } catch (err) {
            this.log.warn('load balancer address not written', { service: key, err: err as Error });
          } finally {
            this.provisioning.delete(key);
          }
        })();
      }, this.opts.provisionDelayMs ?? 1000).unref();
      return;
    }
    // Fallback annotations from the proxy's bind results.
    const binds = this.binds.get(key);
    if (!binds) return;
    const want: Record<string, string | null> = {};
    const ann = svc.metadata.annotations ?? {};
    for (const p of svc.spec.ports ?? []) {
      const b = binds.get(p.port);
      const name = lbPortAnnotation(p.port);
      const value = b?.fallback && b.boundPort ? String(b.boundPort) : null;
      if ((ann[name] ?? null) !== value) want[name] = value;
    }
    for (const name of Object.keys(ann)) {
      if (
        name.startsWith('gwlab.dev/lb-port-') &&
        !(svc.spec.ports ?? []).some((p: any) => lbPortAnnotation(p.port) === name)
      ) {
        want[name] = null;
      }
    }
    if (Object.keys(want).length) await this.patch(path, { metadata: { annotations: want } });
  }

  /**
   * A Service asking for one address (spec.loadBalancerIP, set by the gwvendor deployer for a Gateway's static
   * address): assigned when it is in the lab's range and free, else refused with `AddressesAllocated=False` on the
   * Service and a Warning event, as a cloud load balancer refuses an address it does not own. Returns whether the
   * Service has its address (the bind annotations are then kept up to date).
   */
  private async syncRequested(
    key: string,
    svc: any,
    path: string,
    requested: string,
    current: string | undefined,
  ): Promise<boolean> {
    const mine = this.assigned.get(key) === requested;
    const why = !this.pool.contains(requested)
      ? `${requested} is outside the lab's load balancer range 127.${this.opts.lbOctet}.0.0/16`
      : !mine && !this.pool.claim(requested)
        ? `${requested} is in use by another Service`
        : undefined;
    const previous = this.assigned.get(key);
    if (why) {
      if (previous && previous !== requested) this.pool.release(previous);
      this.assigned.delete(key);
      const refused = allocatedCondition(svc);
      if (refused?.status === 'False' && refused.message === why && !current) return false;
      await this.patch(`${path}/status`, {
        status: { loadBalancer: {}, conditions: [allocated(false, 'AddressNotUsable', why)] },
      });
      void this.events.record({ ...svc, kind: 'Service', apiVersion: 'v1' }, 'Warning', 'AllocationFailed', why);
      return false;
    }
    if (previous && previous !== requested) this.pool.release(previous);
    this.assigned.set(key, requested);
    if (current === requested && allocatedCondition(svc)?.status === 'True') return true;
    await this.patch(`${path}/status`, {
      status: {
        loadBalancer: { ingress: [{ ip: requested, ipMode: 'VIP' }] },
        conditions: [allocated(true, 'Allocated', `${requested} assigned as requested`)],
      },
    });
    void this.events.record(
      { ...svc, kind: 'Service', apiVersion: 'v1' },
      'Normal',
      'EnsuredLoadBalancer',
      `Ensured load balancer with the requested address ${requested}`,
    );
    return true;
  }

  private async patch(path: string, body: unknown): Promise<void> {
    try {
      await this.client.request('PATCH', path, body, 'application/merge-patch+json');
    } catch (err) {
      if (!(err instanceof KubeError && err.code === 404)) throw err;
    }
  }
}

/** The Service condition through which the control plane learns a requested address was refused (status/build.ts). */
const ALLOCATED = 'AddressesAllocated';

function allocatedCondition(svc: any): { status: string; message?: string } | undefined {
  return (svc.status?.conditions ?? []).find((c: { type: string }) => c.type === ALLOCATED);
}

function allocated(ok: boolean, reason: string, message: string) {
  return {
    type: ALLOCATED,
    status: ok ? 'True' : 'False',
    reason,
    message,
    lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
  };
}
