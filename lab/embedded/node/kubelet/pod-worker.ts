// One pod's lifecycle on the node (pkg/kubelet/pod_workers.go, kubelet.go SyncPod): its IP, its volumes (retried
// with FailedMount events while a source is missing; service-account tokens kept fresh while it runs), its init
// containers in order and then its containers (container-loop.ts), its status (pod-status.ts); stopping it
// (SIGTERM, SIGKILL after the grace period, then the object's deletion), and `kubectl exec` in its containers.
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { ContainerProcess } from '../runtime/runner.ts';
import { runContainer } from './container-loop.ts';
import { stopProbes } from './container-probes.ts';
import { PodStatusManager } from './pod-status.ts';
import { rfc3339, sleep } from './time.ts';
import { type ContainerState, type EventType, newContainerState, type PodContext, type PodHost } from './types.ts';
import { PodVolumes, VolumeError } from './volumes.ts';

export class PodWorker implements PodContext {
  pod: any;
  readonly uid: string;
  readonly dir: string;
  ip = '';
  readonly host: PodHost;
  readonly containers = new Map<string, ContainerState>();
  volumeDirs = new Map<string, string>();
  initDone = false;
  private readonly abort = new AbortController();
  /** Aborted when every container is done (the pod Succeeded or Failed): its tokens are no longer renewed. */
  private readonly ended = new AbortController();
  private terminating?: Promise<void>;
  private readonly status: PodStatusManager;

  constructor(host: PodHost, pod: any) {
    this.host = host;
    this.pod = pod;
    this.uid = pod.metadata.uid;
    this.dir = join(host.opts.podsDir, this.uid);
    for (const c of pod.spec.initContainers ?? []) this.containers.set(c.name, newContainerState(c, true, this.dir));
    for (const c of pod.spec.containers ?? []) this.containers.set(c.name, newContainerState(c, false, this.dir));
    this.status = new PodStatusManager(this);
  }

  get signal(): AbortSignal {
    return this.abort.signal;
  }

  /** The directory of a container's instance logs. */
  logDir(container: string): string | undefined {
    return this.containers.get(container)?.logDir;
  }

  containerNames(): string[] {
    return [...this.containers.values()].filter((c) => !c.init).map((c) => c.spec.name);
  }

  isRunning(container: string): boolean {
    const c = this.containers.get(container);
    return !!c?.proc?.running;
  }

  update(pod: any): void {
    this.pod = pod;
    if (pod.metadata.deletionTimestamp) void this.shutdown(pod.metadata.deletionGracePeriodSeconds ?? 30, true);
  }

  event(type: EventType, reason: string, message: string, c?: ContainerState): void {
    const fieldPath = c ? `spec.${c.init ? 'initContainers' : 'containers'}{${c.spec.name}}` : undefined;
    void this.host.events.record({ ...this.pod, kind: 'Pod', apiVersion: 'v1' }, type, reason, message, fieldPath);
  }

  refreshConditions(): void {
    this.status.refresh();
  }

  writeStatus(): void {
    this.status.write();
  }

  /** Flushes pending status writes (tests, shutdown). */
  flushStatus(): Promise<void> {
    return this.status.flush();
  }

  async run(): Promise<void> {
    const pod = this.pod;
    this.ip = this.host.allocateIP(pod);
    this.status.startTime = pod.status?.startTime ?? rfc3339();
    mkdirSync(this.dir, { recursive: true });
    this.status.setCondition('PodScheduled', true);
    this.refreshConditions();
    this.writeStatus();
    const volumes = await this.setUpVolumes();
    if (!volumes) return;
    this.status.setCondition('PodReadyToStartContainers', true);
    this.writeStatus();
    // Service-account tokens are renewed while the pod runs (token_manager.go), and no longer once it stops or ends.
    const renewal = AbortSignal.any([this.abort.signal, this.ended.signal]);
    void volumes.keepTokensFresh(
      renewal,
      () => ({ pod: this.pod, podIP: this.ip }),
      (msg) => this.event('Warning', 'FailedMount', msg),
      this.host.opts.log,
    );
    for (const c of this.containers.values()) {
      if (!c.init) continue;
      await runContainer(this, c);
      if (this.abort.signal.aborted) return;
      if (c.state.terminated?.exitCode !== 0) return this.ended.abort(); // restartPolicy Never: the pod failed
    }
    this.initDone = true;
    this.refreshConditions();
    this.writeStatus();
    await Promise.all([...this.containers.values()].filter((c) => !c.init).map((c) => runContainer(this, c)));
    this.ended.abort();
  }

  /** A missing ConfigMap or Secret keeps the pod in ContainerCreating, retried, as a kubelet does. */
  private async setUpVolumes(): Promise<PodVolumes | undefined> {
    let delay = 500;
    const volumes = new PodVolumes(this.host.opts.client, this.pod, this.dir, this.host.opts.caPem);
    for (;;) {
      if (this.abort.signal.aborted) return undefined;
      try {
        await volumes.setUp(this.pod, this.ip);
        this.volumeDirs = volumes.dirs;
        return volumes;
      } catch (err) {
        const msg = err instanceof VolumeError ? err.message : String((err as Error).message ?? err);
        this.event('Warning', 'FailedMount', `MountVolume.SetUp failed: ${msg}`);
        await sleep(delay, this.abort.signal);
        delay = Math.min(delay * 2, 10_000);
      }
    }
  }

  /**
   * Stops the pod: every container gets SIGTERM, then SIGKILL after `grace` seconds. With `deleteObject` (a graceful
   * deletion through the API), the pod object is removed once its processes are gone.
   */
  shutdown(grace: number, deleteObject = false): Promise<void> {
    this.terminating ??= (async () => {
      this.abort.abort();
      const running = [...this.containers.values()].filter((c) => c.proc?.running);
      for (const c of running) this.event('Normal', 'Killing', `Stopping container ${c.spec.name}`, c);
      await Promise.all(
        running.map(async (c) => {
          for (const e of c.execs) void e.stop(0);
          await c.proc!.stop(grace);
        }),
      );
      for (const c of this.containers.values()) stopProbes(c);
      if (deleteObject) await this.host.finalizeDeletion(this.pod);
      this.status.gone = true;
      await this.flushStatus();
      if (this.ip) this.host.releaseIP(this.ip);
      rmSync(this.dir, { recursive: true, force: true });
      this.host.forget(this.uid);
    })();
    return this.terminating;
  }

  /**
   * Runs a command in a container's context (environment, working directory, mounts and network identity), as
   * `kubectl exec` does. stdio 'pipe': the caller reads and writes the streams.
   */
  startExec(container: string, command: string[]): ContainerProcess {
    const c = this.containers.get(container);
    if (!c?.proc?.running || !c.env || !c.runtimeConfig) {
      throw new Error(`container ${container} is not running`);
    }
    const proc = this.host.opts.runner.start({
      namespace: this.pod.metadata.namespace,
      pod: this.pod.metadata.name,
      container: `${container}.exec.${this.host.nextExecId()}`,
      argv: command,
      env: c.env,
      workingDir: c.cwd,
      runtimeConfig: c.runtimeConfig,
      stdio: 'pipe',
    });
    c.execs.add(proc);
    void proc.exited.then(() => c.execs.delete(proc));
    return proc;
  }

  /** Runs a command to completion (exec probes); output is stdout+stderr. */
  async exec(container: string, command: string[], timeoutMs: number): Promise<{ exitCode: number; output: string }> {
    const proc = this.startExec(container, command);
    let output = '';
    proc.stdin?.end();
    proc.stdout?.on('data', (d) => (output += d));
    proc.stderr?.on('data', (d) => (output += d));
    const timer = setTimeout(() => void proc.stop(0), timeoutMs);
    const exit = await proc.exited;
    clearTimeout(timer);
    return { exitCode: exit.exitCode, output: proc.startError ?? output };
  }
}
