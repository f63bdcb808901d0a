// The kubelet of the embedded cluster: it binds unscheduled pods to its one node (the scheduler's job, trivial with
// one node), registers the Node (node-status.ts), and runs every pod bound to it as local processes, one PodWorker
// each (pod-worker.ts: volumes → init containers → containers, container-loop.ts; probes, container-probes.ts;
// status, pod-status.ts). Deleting a pod stops its processes (SIGTERM, SIGKILL after the grace period) and then
// removes the object. It keeps the Services of the cluster for the containers' Service-link variables.
import type { KObject } from '../../../../system/shared/kobject.ts';
import { podLoopback } from '../../../state.ts';
import { EventRecorder } from '../../client/events.ts';
import { KubeError } from '../../client/kube-client.ts';
import { Informer, ListWatch } from '../../client/list-watch.ts';
import { AddressPool } from '../../ipam.ts';
import { NodeStatus } from './node-status.ts';
import { serviceLinkEnv } from './pod-env.ts';
import { PodWorker } from './pod-worker.ts';
import type { KubeletOptions, PodHost } from './types.ts';

export type { PodWorker } from './pod-worker.ts';
export type { KubeletOptions } from './types.ts';

export class Kubelet implements PodHost {
  readonly opts: KubeletOptions;
  readonly events: EventRecorder;
  private readonly scheduler: EventRecorder;
  private readonly podIPs: AddressPool;
  private readonly workers = new Map<string, PodWorker>();
  /** The cluster's Services, for the containers' Service-link variables. */
  private readonly serviceInformer: Informer;
  private readonly services: Map<string, KObject>;
  private watches: (Informer | ListWatch)[] = [];
  private readonly node: NodeStatus;
  private heartbeat?: NodeJS.Timeout;
  private stopped = false;
  private execSeq = 0;

  constructor(opts: KubeletOptions) {
    this.opts = opts;
    this.events = new EventRecorder(opts.client, { component: 'kubelet', host: opts.nodeName }, opts.log);
    this.scheduler = new EventRecorder(opts.client, { component: 'default-scheduler' }, opts.log);
    this.podIPs = new AddressPool(opts.plan.podOctet);
    this.node = new NodeStatus(opts, this.hostIP, this.events);
    this.serviceInformer = new Informer(opts.client, '/api/v1/services', opts.log);
    this.services = this.serviceInformer.store;
  }

  get hostIP(): string {
    return this.opts.hostIP ?? '127.0.0.1';
  }

  /** Second octets whose ports below portShift.below are shifted: pod IPs, pod loopbacks and ClusterIPs. */
  get shiftedOctets(): number[] {
    const p = this.opts.plan;
    return [p.podOctet, p.loopOctet, p.serviceOctet];
  }

  /** Port really bound for `port` on `ip` (low-port shift of unprivileged labs). */
  effectivePort(ip: string, port: number): number {
    const s = this.opts.portShift;
    if (!s || port <= 0 || port >= s.below) return port;
    return this.shiftedOctets.includes(Number(ip.split('.')[1])) ? port + s.offset : port;
  }

  /** The pod loopback of the pod at `podIP`: its `lo`, where port-forward connects (lab/state.ts). */
  podLoopback(podIP: string): string {
    return podLoopback(this.opts.plan, podIP);
  }

  async start(): Promise<void> {
    await this.node.register();
    this.heartbeat = setInterval(() => void this.node.register().catch(() => undefined), 20_000);
    this.heartbeat.unref();
    const pods = new ListWatch(this.opts.client, '/api/v1/pods', (type, o) => this.onPod(type, o), this.opts.log);
    this.watches = [this.serviceInformer, pods];
    for (const w of this.watches) w.start();
  }

  async stop(gracePeriodSeconds = 5): Promise<void> {
    this.stopped = true;
    clearInterval(this.heartbeat);
    for (const w of this.watches) w.stop();
    await Promise.all([...this.workers.values()].map((w) => w.shutdown(gracePeriodSeconds)));
  }

  /** The worker of a pod (subresources: logs, exec, port-forward). */
  worker(uid: string): PodWorker | undefined {
    return this.workers.get(uid);
  }

  nextExecId(): number {
    return ++this.execSeq;
  }

  private onPod(type: string, pod?: KObject): void {
    if (!pod || this.stopped) return;
    const p = pod as any;
    if (type === 'DELETED') {
      const w = this.workers.get(p.metadata.uid);
      if (w) void w.shutdown(0);
      return;
    }
    if (!p.spec?.nodeName) {
      if ((p.spec?.schedulerName ?? 'default-scheduler') === 'default-scheduler' && !p.metadata.deletionTimestamp) {
        void this.bind(p);
      }
      return;
    }
    if (p.spec.nodeName !== this.opts.nodeName) return;
    let w = this.workers.get(p.metadata.uid);
    if (!w) {
      if (p.metadata.deletionTimestamp) {
        // Bound to us but never started here (e.g. before a lab restart): nothing to stop.
        void this.finalizeDeletion(p);
        return;
      }
      if (['Succeeded', 'Failed'].includes(p.status?.phase) && p.status?.startTime) return;
      w = new PodWorker(this, p);
      this.workers.set(p.metadata.uid, w);
      void w.run();
    } else {
      w.update(p);
    }
  }

  private async bind(pod: any): Promise<void> {
    try {
      await this.opts.client.request(
        'PATCH',
        `/api/v1/namespaces/${pod.metadata.namespace}/pods/${pod.metadata.name}`,
        { spec: { nodeName: this.opts.nodeName } },
        'application/strategic-merge-patch+json',
      );
      void this.scheduler.record(
        pod,
        'Normal',
        'Scheduled',
        `Successfully assigned ${pod.metadata.namespace}/${pod.metadata.name} to ${this.opts.nodeName}`,
      );
    } catch (err) {
      if (!(err instanceof KubeError && (err.code === 404 || err.code === 409 || err.code === 422))) {
        this.opts.log.warn('binding failed', {
          pod: `${pod.metadata.namespace}/${pod.metadata.name}`,
          err: err as Error,
        });
      }
    }
  }

  /** @internal */
  allocateIP(pod: any): string {
    const prev = pod.status?.podIP;
    if (prev && this.podIPs.claim(prev)) return prev;
    return this.podIPs.allocate();
  }

  /** @internal */
  releaseIP(ip: string): void {
    this.podIPs.release(ip);
  }

  /** @internal */
  forget(uid: string): void {
    this.workers.delete(uid);
  }

  /** @internal The Service-link and `kubernetes` variables of a pod's containers. */
  serviceEnv(pod: any): Record<string, string> {
    const env: Record<string, string> = {};
    const shift = (ip: string, port: number) => this.effectivePort(ip, port);
    if (pod.spec.enableServiceLinks !== false) {
      for (const s of this.services.values()) {
        if (s.metadata.namespace === pod.metadata.namespace) Object.assign(env, serviceLinkEnv(s, shift));
      }
    }
    const k = this.services.get('default/kubernetes') as any;
    if (k?.spec?.clusterIP) {
      const port = k.spec.ports?.[0]?.port ?? 443;
      env.KUBERNETES_SERVICE_HOST = k.spec.clusterIP;
      env.KUBERNETES_SERVICE_PORT = String(shift(k.spec.clusterIP, port));
      env.KUBERNETES_SERVICE_PORT_HTTPS = env.KUBERNETES_SERVICE_PORT;
      env.KUBERNETES_PORT = `tcp://${k.spec.clusterIP}:${env.KUBERNETES_SERVICE_PORT}`;
      env[`KUBERNETES_PORT_${env.KUBERNETES_SERVICE_PORT}_TCP`] = env.KUBERNETES_PORT;
      env[`KUBERNETES_PORT_${env.KUBERNETES_SERVICE_PORT}_TCP_PROTO`] = 'tcp';
      env[`KUBERNETES_PORT_${env.KUBERNETES_SERVICE_PORT}_TCP_PORT`] = env.KUBERNETES_SERVICE_PORT;
      env[`KUBERNETES_PORT_${env.KUBERNETES_SERVICE_PORT}_TCP_ADDR`] = k.spec.clusterIP;
    }
    return env;
  }

  /** @internal Deletes a pod object whose processes are gone (grace 0 ends the graceful deletion). */
  async finalizeDeletion(pod: any): Promise<void> {
    try {
      await this.opts.client.request(
        'DELETE',
        `/api/v1/namespaces/${pod.metadata.namespace}/pods/${pod.metadata.name}?gracePeriodSeconds=0`,
        { apiVersion: 'v1', kind: 'DeleteOptions', gracePeriodSeconds: 0, preconditions: { uid: pod.metadata.uid } },
      );
    } catch (err) {
      if (!(err instanceof KubeError && (err.code === 404 || err.code === 409))) {
        this.opts.log.warn('pod deletion failed', { pod: pod.metadata.name, err: err as Error });
      }
    }
  }
}
