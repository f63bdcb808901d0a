// A pod's status as the kubelet's status manager keeps it (pkg/kubelet/status/status_manager.go, and the phase and
// conditions of kubelet_pods.go): the conditions PodReadyToStartContainers, Initialized, Ready, ContainersReady and
// PodScheduled with their transition times, the phase computed from the containers, the container statuses, and
// one PATCH of pods/status in flight at a time in which the latest state wins.
import { KubeError } from '../../client/kube-client.ts';
import { rfc3339 } from './time.ts';
import type { ContainerState, PodContext } from './types.ts';

const CONDITION_ORDER = ['PodReadyToStartContainers', 'Initialized', 'Ready', 'ContainersReady', 'PodScheduled'];

export class PodStatusManager {
  private readonly ctx: PodContext;
  private phase = 'Pending';
  startTime?: string;
  private readonly conditions = new Map<string, any>();
  private dirty = false;
  private writing?: Promise<void>;
  /** The pod object is gone (deleted, or the worker stopped): no more writes. */
  gone = false;

  constructor(ctx: PodContext) {
    this.ctx = ctx;
  }

  setCondition(type: string, status: boolean, reason?: string, message?: string): void {
    const prev = this.conditions.get(type);
    const s = status ? 'True' : 'False';
    if (prev && prev.status === s && prev.reason === reason) return;
    this.conditions.set(type, {
      type,
      status: s,
      lastProbeTime: null,
      lastTransitionTime: prev?.status === s ? prev.lastTransitionTime : rfc3339(),
      ...(reason ? { reason } : {}),
      ...(message ? { message } : {}),
    });
  }

  /** Initialized, ContainersReady, Ready and the phase, from the containers' states. */
  refresh(): void {
    const all = [...this.ctx.containers.values()];
    const apps = all.filter((c) => !c.init);
    const inits = all.filter((c) => c.init);
    if (inits.length === 0 || this.ctx.initDone) this.setCondition('Initialized', true);
    else {
      const pending = inits.filter((c) => !(c.state.terminated?.exitCode === 0)).map((c) => c.spec.name);
      this.setCondition(
        'Initialized',
        false,
        'ContainersNotInitialized',
        `containers with incomplete status: [${pending.join(' ')}]`,
      );
    }
    const notReady = apps.filter((c) => !c.ready).map((c) => c.spec.name);
    const ready = notReady.length === 0 && apps.length > 0;
    const msg = `containers with unready status: [${notReady.join(' ')}]`;
    this.setCondition('ContainersReady', ready, ready ? undefined : 'ContainersNotReady', ready ? undefined : msg);
    this.setCondition('Ready', ready, ready ? undefined : 'ContainersNotReady', ready ? undefined : msg);
    this.phase = this.computePhase(apps, inits);
  }

  private computePhase(apps: ContainerState[], inits: ContainerState[]): string {
    const failedInit = inits.some((c) => c.done && c.state.terminated && c.state.terminated.exitCode !== 0);
    if (failedInit) return 'Failed';
    if (!this.ctx.initDone && inits.length) return 'Pending';
    if (apps.every((c) => c.done))
      return apps.every((c) => c.state.terminated?.exitCode === 0) ? 'Succeeded' : 'Failed';
    if (apps.some((c) => c.state.running || c.restartCount > 0 || c.lastState.terminated || c.done)) return 'Running';
    return 'Pending';
  }

  private status(): any {
    const host = this.ctx.host;
    const cs = (c: ContainerState) => ({
      name: c.spec.name,
      image: c.spec.image,
      imageID: `gwlab://${c.spec.image}`,
      ...(c.containerID ? { containerID: c.containerID } : {}),
      ready: c.ready,
      started: c.init ? undefined : c.started,
      restartCount: c.restartCount,
      state: c.state,
      lastState: c.lastState,
    });
    const all = [...this.ctx.containers.values()];
    return {
      phase: this.phase,
      conditions: CONDITION_ORDER.filter((t) => this.conditions.has(t)).map((t) => this.conditions.get(t)),
      hostIP: host.hostIP,
      hostIPs: [{ ip: host.hostIP }],
      podIP: this.ctx.ip,
      podIPs: [{ ip: this.ctx.ip }],
      startTime: this.startTime,
      ...(all.some((c) => c.init) ? { initContainerStatuses: all.filter((c) => c.init).map(cs) } : {}),
      containerStatuses: all.filter((c) => !c.init).map(cs),
    };
  }

  /** Coalesces status writes: one PATCH in flight, the latest state wins. */
  write(): void {
    if (this.gone) return;
    this.dirty = true;
    if (this.writing) return;
    this.writing = (async () => {
      while (this.dirty && !this.gone) {
        this.dirty = false;
        const pod = this.ctx.pod;
        try {
          await this.ctx.host.opts.client.request(
            'PATCH',
            `/api/v1/namespaces/${pod.metadata.namespace}/pods/${pod.metadata.name}/status`,
            { status: this.status() },
            'application/merge-patch+json',
          );
        } catch (err) {
          if (err instanceof KubeError && err.code === 404) this.gone = true;
          else
            this.ctx.host.opts.log.debug('status update failed', {
              pod: `${pod.metadata.namespace}/${pod.metadata.name}`,
              err: err as Error,
            });
        }
      }
      this.writing = undefined;
    })();
  }

  /** Flushes pending status writes (tests, shutdown). */
  async flush(): Promise<void> {
    while (this.writing) await this.writing;
  }
}
