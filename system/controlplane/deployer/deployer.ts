// The deployer: keeps each gwvendor Gateway's proxy objects (ServiceAccount, ConfigMap, Service, Deployment) as
// proxyObjects() says, with server-side apply (field manager gwvendor). Its desired state is a krt collection over the
// Gateways, their class and their GatewayParameters, so only a change to those re-applies; a deleted proxy Deployment
// or Service is re-created. A Gateway whose parametersRef does not resolve is held: its objects are left as they are.
import { type KubeConfig, KubernetesObjectApi, PatchStrategy } from '@kubernetes/client-node';
import type { Logger } from '../../shared/log.ts';
import { isOurGateway } from '../ir/gateway.ts';
import type { GatewayIR } from '../ir/types.ts';
import { type Collection, derive } from '../krt/collection.ts';
import type { Metrics } from '../metrics.ts';
import { type Gateway, type GatewayParametersSpec, VENDOR_GROUP } from '../model.ts';
import type { Pipeline } from '../pipeline.ts';
import type { EventSink } from '../status/events.ts';
import { WorkQueue } from '../work-queue.ts';
import { type DeployerSettings, type ProxyObjects, proxyObjects } from './objects.ts';

export const FIELD_MANAGER = 'gwvendor';

export type Desired =
  | { key: string; gateway: EventRef; state: 'deploy'; parameters?: string; objects: ProxyObjects }
  | { key: string; gateway: EventRef; state: 'hold'; reason: string };

interface EventRef {
  apiVersion: string;
  kind: string;
  namespace: string;
  name: string;
  uid?: string;
}

/** What the queue works on: a Gateway's desired state, or the removal of what was applied for a Gateway now gone. */
type Work = Desired | { key: string; state: 'delete'; last: Desired };

export interface ObjectApplier {
  apply(obj: Record<string, any>): Promise<void>;
  delete(obj: { apiVersion: string; kind: string; metadata: { namespace: string; name: string } }): Promise<void>;
}

export function kubeApplier(kc: KubeConfig): ObjectApplier {
  const api = KubernetesObjectApi.makeApiClient(kc);
  return {
    async apply(obj) {
      await api.patch(obj as any, undefined, undefined, FIELD_MANAGER, true, PatchStrategy.ServerSideApply);
    },
    async delete(obj) {
      try {
        await api.delete(obj as any);
      } catch (err) {
        if ((err as { code?: number }).code !== 404) throw err;
      }
    },
  };
}

export class Deployer {
  readonly desired: Collection<Desired>;
  private readonly p: Pipeline;
  private readonly applier: ObjectApplier;
  private readonly log: Logger;
  private readonly events?: EventSink;
  private readonly metrics?: Metrics;
  private readonly queue: WorkQueue<Work>;
  private readonly applied = new Map<string, Desired>();
  private unsubs: (() => void)[] = [];
  applies = 0;

  constructor(
    p: Pipeline,
    applier: ObjectApplier,
    settings: DeployerSettings,
    log: Logger,
    opts: { events?: EventSink; metrics?: Metrics } = {},
  ) {
    this.p = p;
    this.applier = applier;
    this.log = log;
    this.events = opts.events;
    this.metrics = opts.metrics;
    this.queue = new WorkQueue<Work>({
      work: (d) => this.reconcile(d),
      failed: (d, err, attempt) => {
        const delay = Math.min(500 * 2 ** attempt, 60_000);
        this.log.warn('deploy failed; retrying', { gateway: d.key, attempt, retryInMs: delay, err: err as Error });
        if (d.state !== 'delete') {
          this.events?.emit(
            d.gateway,
            'Warning',
            'DeployFailed',
            `could not apply the proxy objects: ${(err as Error).message}`,
          );
        }
        return delay;
      },
      // What the Gateway wants by then; a delete that failed is tried again while nothing replaced it.
      retry: (d) => this.desired.get(d.key) ?? (d.state === 'delete' ? d : undefined),
    });
    this.desired = derive(p.rt, 'ProxyObjects', p.gatewaysIn, (ctx, gw: Gateway, key) => {
      const cls = ctx.fetch(p.gatewayClasses, gw.spec?.gatewayClassName ?? '');
      if (!isOurGateway(gw, cls, p.controllerName) || gw.metadata.deletionTimestamp) return undefined;
      const ns = gw.metadata.namespace ?? 'default';
      const gateway: EventRef = {
        apiVersion: 'gateway.networking.k8s.io/v1',
        kind: 'Gateway',
        namespace: ns,
        name: gw.metadata.name,
        uid: gw.metadata.uid,
      };
      const ref = gw.spec?.infrastructure?.parametersRef;
      let params: GatewayParametersSpec | undefined;
      if (ref) {
        if (ref.group !== VENDOR_GROUP || ref.kind !== 'GatewayParameters') {
          return {
            key,
            gateway,
            state: 'hold' as const,
            reason: `parametersRef ${ref.group}/${ref.kind} is not supported`,
          };
        }
        const gp = ctx.fetch(p.gatewayParameters, `${ns}/${ref.name}`);
        if (!gp)
          return { key, gateway, state: 'hold' as const, reason: `GatewayParameters ${ns}/${ref.name} not found` };
        params = gp.spec;
      }
      return {
        key,
        gateway,
        state: 'deploy' as const,
        ...(ref ? { parameters: `${ns}/${ref.name}` } : {}),
        objects: proxyObjects(gw, params, settings, servedPorts(ctx.fetch(p.gateways, key)?.ir)),
      };
    });
  }

  /** Applies the desired state of every Gateway, then follows changes. */
  start(): void {
    for (const d of this.desired.list()) this.enqueue(d);
    this.unsubs.push(
      this.desired.subscribe((events) => {
        for (const e of events) {
          if (e.new) this.enqueue(e.new);
          else if (e.old) this.enqueue({ key: e.key, state: 'delete', last: e.old });
        }
      }),
    );
    // Someone deleted a proxy Deployment or Service: put it back.
    for (const input of [this.p.deployments, this.p.services]) {
      this.unsubs.push(
        input.subscribe((events) => {
          for (const e of events) {
            if (e.new || !e.old) continue;
            const d = this.desired.get(e.key);
            if (d?.state === 'deploy' && this.applied.get(e.key) === d) {
              this.log.info('proxy object deleted; re-creating', {
                gateway: e.key,
                kind: (e.old as { kind?: string }).kind,
              });
              this.applied.delete(e.key);
              this.enqueue(d);
            }
          }
        }),
      );
    }
  }

  stop(): void {
    this.queue.stop();
    for (const u of this.unsubs) u();
  }

  idle(): Promise<void> {
    return this.queue.idle();
  }

  private enqueue(d: Work): void {
    this.queue.add(d);
  }

  private async reconcile(d: Work): Promise<void> {
    if (d.state === 'hold') {
      this.log.warn('not deploying: Gateway parameters do not resolve', { gateway: d.key, reason: d.reason });
      this.events?.emit(d.gateway, 'Warning', 'InvalidParameters', `proxy not (re)deployed: ${d.reason}`);
      return;
    }
    if (d.state === 'delete') {
      if (d.last.state !== 'deploy') return;
      // The Gateway left our class (a deleted Gateway's objects go with it through their ownerReferences).
      const o = d.last.objects;
      for (const obj of [o.deployment, o.service, o.configMap, o.serviceAccount]) {
        await this.applier.delete(obj as any);
      }
      this.applied.delete(d.key);
      this.log.info('proxy objects deleted', { gateway: d.key });
      return;
    }
    const o = d.objects;
    const t0 = performance.now();
    const existed = !!this.p.deployments.get(d.key);
    const prev = this.applied.get(d.key);
    for (const obj of [o.serviceAccount, o.configMap, o.service, o.deployment]) {
      try {
        await this.applier.apply(obj);
        this.metrics?.deployerApplies.inc({ kind: obj.kind, result: 'applied' });
      } catch (err) {
        this.metrics?.deployerApplies.inc({ kind: obj.kind, result: 'error' });
        throw new Error(
          `${obj.kind} ${d.key}: ${(err as { body?: { message?: string } }).body?.message ?? (err as Error).message}`,
        );
      }
    }
    this.applies++;
    this.applied.set(d.key, d);
    const args = (o.deployment.spec.template.spec.containers[0].args as string[]).join(' ');
    this.log.info('proxy applied', {
      gateway: d.key,
      parameters: d.parameters,
      ms: Math.round(performance.now() - t0),
      args,
    });
    // Events for what changed: a new proxy, or new settings; a restart of the control plane re-applies silently.
    const what = `ServiceAccount, ConfigMap, Service (${o.service.spec.type}) and Deployment ${d.gateway.name}${d.parameters ? ` with GatewayParameters ${d.parameters}` : ''}`;
    if (!existed) this.events?.emit(d.gateway, 'Normal', 'Deployed', `proxy deployed: ${what}`);
    else if (prev && prev !== d) this.events?.emit(d.gateway, 'Normal', 'Updated', `proxy updated: ${what}`);
  }
}

/** The ports the Gateway's proxy serves beyond its spec's listeners: those of its ListenerSets (from the IR). */
function servedPorts(ir: GatewayIR | undefined): { port: number; protocol: string }[] {
  if (!ir) return [];
  return [
    ...ir.listeners.map((l) => ({ port: l.port, protocol: 'HTTP' })),
    ...(ir.l4Listeners ?? []).map((l) => ({ port: l.port, protocol: l.protocol })),
  ];
}
