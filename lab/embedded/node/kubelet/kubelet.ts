// The kubelet of the embedded cluster: it binds unscheduled pods to its one node (the scheduler's job, trivial with
// one node), registers the Node, and runs every pod bound to it as local processes through the runner:
// volumes → init containers → containers, each resolved through the image catalog, with its environment, mounts and
// the pod runtime hook; probes drive readiness and restarts; restartPolicy with CrashLoopBackOff; events; status.
// Deleting a pod stops its processes (SIGTERM, SIGKILL after the grace period) and then removes the object.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { constants as osConstants } from 'node:os';
import { join } from 'node:path';
import type { KObject } from '../../../../system/shared/kobject.ts';
import type { Logger } from '../../../../system/shared/log.ts';
import { type AddressPlan, podLoopback } from '../../../state.ts';
import { EventRecorder } from '../../client/events.ts';
import { type KubeClient, KubeError } from '../../client/kube-client.ts';
import { ListWatch } from '../../client/list-watch.ts';
import { AddressPool } from '../../ipam.ts';
import { newInstanceLog } from '../runtime/logs.ts';
import type { ContainerExit, ContainerProcess, ProcessRunner } from '../runtime/runner.ts';
import { pathMapper } from '../runtime-hook/hook-fs.ts';
import { type PodRuntimeConfig, podSearchPath } from '../runtime-hook/runtime-config.ts';
import { containerArgv, type ImageCatalog, ImagePullError } from './images.ts';
import { containerEnv, EnvError, serviceLinkEnv } from './pod-env.ts';
import { type ProbeTarget, ProbeWorker } from './probes.ts';
import { containerMounts, PodVolumes, VolumeError } from './volumes.ts';

export interface KubeletOptions {
  client: KubeClient;
  nodeName: string;
  lab: string;
  /** labPaths().pods */
  podsDir: string;
  plan: AddressPlan;
  runner: ProcessRunner;
  catalog: ImageCatalog;
  /** Where the cluster DNS server listens (ClusterDns.endpoint). */
  dns: { address: string; port: number };
  /** The cluster CA (ca.crt of service-account volumes). */
  caPem: string;
  /** Unprivileged lab: ports below `below` on pod and service IPs are shifted by `offset`. */
  portShift?: { below: number; offset: number } | null;
  /** CrashLoopBackOff and ImagePullBackOff delays: first restart immediate, then initial, doubling up to max. */
  backoff?: { initialSeconds: number; maxSeconds: number };
  clusterDomain?: string;
  /** The node's address (status.hostIP). */
  hostIP?: string;
  log: Logger;
}

type CState = {
  spec: any;
  init: boolean;
  restartCount: number;
  state: any;
  lastState: any;
  ready: boolean;
  started: boolean;
  proc?: ContainerProcess;
  containerID?: string;
  probes: ProbeWorker[];
  readiness?: boolean;
  startupDone: boolean;
  crashes: number;
  execs: Set<ContainerProcess>;
  done: boolean;
  runtimeConfig?: string;
  env?: Record<string, string>;
  cwd?: string;
  logDir: string;
};

const rfc3339 = (d = new Date()) => d.toISOString().replace(/\.\d+Z$/, 'Z');

/**
 * A duration as Go's time.Duration prints it, which is how the kubelet writes back-offs ("back-off 10s",
 * "back-off 2m40s"): `250ms`, `1.5s`, `5m0s`. Rounded to the millisecond.
 */
function goDuration(ms: number): string {
  const t = Math.round(ms);
  if (t === 0) return '0s';
  if (t < 1000) return `${t}ms`;
  const h = Math.floor(t / 3_600_000);
  const m = Math.floor((t % 3_600_000) / 60_000);
  const s = `${(t % 60_000) / 1000}s`;
  return h ? `${h}h${m}m${s}` : m ? `${m}m${s}` : s;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done);
  });
}

export class Kubelet {
  readonly opts: KubeletOptions;
  readonly events: EventRecorder;
  private readonly scheduler: EventRecorder;
  private readonly podIPs: AddressPool;
  private readonly workers = new Map<string, PodWorker>();
  private readonly services = new Map<string, KObject>();
  private watches: ListWatch[] = [];
  private heartbeat?: NodeJS.Timeout;
  private stopped = false;
  private execSeq = 0;

  constructor(opts: KubeletOptions) {
    this.opts = opts;
    this.events = new EventRecorder(opts.client, { component: 'kubelet', host: opts.nodeName }, opts.log);
    this.scheduler = new EventRecorder(opts.client, { component: 'default-scheduler' }, opts.log);
    this.podIPs = new AddressPool(opts.plan.podOctet);
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
    await this.registerNode();
    this.heartbeat = setInterval(() => void this.registerNode().catch(() => undefined), 20_000);
    this.heartbeat.unref();
    const svc = new ListWatch(
      this.opts.client,
      '/api/v1/services',
      (type, o) => {
        if (!o) return;
        const key = `${o.metadata.namespace}/${o.metadata.name}`;
        if (type === 'DELETED') this.services.delete(key);
        else this.services.set(key, o);
      },
      this.opts.log,
    );
    const pods = new ListWatch(this.opts.client, '/api/v1/pods', (type, o) => this.onPod(type, o), this.opts.log);
    this.watches = [svc, pods];
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

  private async registerNode(): Promise<void> {
    const os = await import('node:os');
    const now = rfc3339();
    const name = this.opts.nodeName;
    const cond = (type: string, status: string, reason: string, message: string) => ({
      type,
      status,
      reason,
      message,
      lastHeartbeatTime: now,
      lastTransitionTime: this.nodeSince,
    });
    const capacity = {
      cpu: String(os.availableParallelism()),
      memory: `${Math.floor(os.totalmem() / 1024)}Ki`,
      pods: '250',
      'ephemeral-storage': '100Gi',
    };
    const status = {
      conditions: [
        cond('MemoryPressure', 'False', 'KubeletHasSufficientMemory', 'kubelet has sufficient memory available'),
        cond('DiskPressure', 'False', 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure'),
        cond('PIDPressure', 'False', 'KubeletHasSufficientPID', 'kubelet has sufficient PID available'),
        cond('Ready', 'True', 'KubeletReady', 'kubelet is posting ready status'),
      ],
      addresses: [
        { type: 'InternalIP', address: this.hostIP },
        { type: 'Hostname', address: name },
      ],
      capacity,
      allocatable: capacity,
      nodeInfo: {
        machineID: '',
        systemUUID: '',
        bootID: '',
        kernelVersion: os.release(),
        osImage: `gwlab embedded node (${os.type()})`,
        containerRuntimeVersion: 'gwlab-process://1',
        kubeletVersion: 'v1.32.0-gwlab',
        kubeProxyVersion: 'v1.32.0-gwlab',
        operatingSystem: 'linux',
        architecture: process.arch === 'x64' ? 'amd64' : process.arch,
      },
    };
    const path = `/api/v1/nodes/${name}`;
    let node: any;
    try {
      node = await this.opts.client.request('GET', path);
    } catch (err) {
      if (!(err instanceof KubeError && err.code === 404)) throw err;
      node = await this.opts.client.request('POST', '/api/v1/nodes', {
        apiVersion: 'v1',
        kind: 'Node',
        metadata: {
          name,
          labels: {
            'kubernetes.io/hostname': name,
            'kubernetes.io/os': 'linux',
            'kubernetes.io/arch': status.nodeInfo.architecture,
            'node-role.kubernetes.io/control-plane': '',
          },
        },
        spec: { podCIDR: `127.${this.opts.plan.podOctet}.0.0/16`, podCIDRs: [`127.${this.opts.plan.podOctet}.0.0/16`] },
      });
    }
    const patched = await this.opts.client.request(
      'PATCH',
      `${path}/status`,
      { status },
      'application/merge-patch+json',
    );
    node = patched?.metadata ? patched : node;
    if (!this.nodeRegistered && node?.metadata) {
      this.nodeRegistered = true;
      void this.events.record(
        { ...node, kind: 'Node', apiVersion: 'v1' },
        'Normal',
        'NodeReady',
        `Node ${name} status is now: NodeReady`,
      );
    }
  }

  private readonly nodeSince = rfc3339();
  private nodeRegistered = false;
}

/** One pod's lifecycle on the node. */
export class PodWorker {
  pod: any;
  readonly uid: string;
  readonly dir: string;
  ip = '';
  private readonly k: Kubelet;
  private readonly containers = new Map<string, CState>();
  private readonly abort = new AbortController();
  /** Aborted when every container is done (the pod Succeeded or Failed): its tokens are no longer renewed. */
  private readonly ended = new AbortController();
  private terminating?: Promise<void>;
  private phase = 'Pending';
  private startTime?: string;
  private conditions = new Map<string, any>();
  private volumeDirs = new Map<string, string>();
  private statusDirty = false;
  private statusWriting?: Promise<void>;
  private gone = false;
  private initDone = false;

  constructor(k: Kubelet, pod: any) {
    this.k = k;
    this.pod = pod;
    this.uid = pod.metadata.uid;
    this.dir = join(k.opts.podsDir, this.uid);
    const mk = (c: any, init: boolean): CState => ({
      spec: c,
      init,
      restartCount: 0,
      state: { waiting: { reason: init ? 'PodInitializing' : 'ContainerCreating' } },
      lastState: {},
      ready: false,
      started: false,
      probes: [],
      startupDone: !c.startupProbe,
      crashes: 0,
      execs: new Set(),
      done: false,
      logDir: join(this.dir, 'logs', c.name),
    });
    for (const c of pod.spec.initContainers ?? []) this.containers.set(c.name, mk(c, true));
    for (const c of pod.spec.containers ?? []) this.containers.set(c.name, mk(c, false));
  }

  private get log() {
    return this.k.opts.log;
  }

  private get key(): string {
    return `${this.pod.metadata.namespace}/${this.pod.metadata.name}`;
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

  private event(type: 'Normal' | 'Warning', reason: string, message: string, c?: CState): void {
    const fieldPath = c ? `spec.${c.init ? 'initContainers' : 'containers'}{${c.spec.name}}` : undefined;
    void this.k.events.record({ ...this.pod, kind: 'Pod', apiVersion: 'v1' }, type, reason, message, fieldPath);
  }

  private setCondition(type: string, status: boolean, reason?: string, message?: string): void {
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

  async run(): Promise<void> {
    const pod = this.pod;
    this.ip = this.k.allocateIP(pod);
    this.startTime = pod.status?.startTime ?? rfc3339();
    mkdirSync(this.dir, { recursive: true });
    this.setCondition('PodScheduled', true);
    this.refreshConditions();
    this.writeStatus();
    // Volumes: a missing ConfigMap or Secret keeps the pod in ContainerCreating, retried, as a kubelet does.
    let delay = 500;
    const volumes = new PodVolumes(this.k.opts.client, this.pod, this.dir, this.k.opts.caPem);
    for (;;) {
      if (this.abort.signal.aborted) return;
      try {
        await volumes.setUp(this.pod, this.ip);
        this.volumeDirs = volumes.dirs;
        break;
      } catch (err) {
        const msg = err instanceof VolumeError ? err.message : String((err as Error).message ?? err);
        this.event('Warning', 'FailedMount', `MountVolume.SetUp failed: ${msg}`);
        await sleep(delay, this.abort.signal);
        delay = Math.min(delay * 2, 10_000);
      }
    }
    this.setCondition('PodReadyToStartContainers', true);
    this.writeStatus();
    // Service-account tokens are renewed while the pod runs (token_manager.go), and no longer once it stops or ends.
    const renewal = AbortSignal.any([this.abort.signal, this.ended.signal]);
    void volumes.keepTokensFresh(
      renewal,
      () => ({ pod: this.pod, podIP: this.ip }),
      (msg) => this.event('Warning', 'FailedMount', msg),
      this.log,
    );
    for (const c of this.containers.values()) {
      if (!c.init) continue;
      await this.containerLoop(c);
      if (this.abort.signal.aborted) return;
      if (c.state.terminated?.exitCode !== 0) return this.ended.abort(); // restartPolicy Never: the pod failed
    }
    this.initDone = true;
    this.refreshConditions();
    this.writeStatus();
    await Promise.all([...this.containers.values()].filter((c) => !c.init).map((c) => this.containerLoop(c)));
    this.ended.abort();
  }

  private backoffMs(c: CState): number {
    const b = this.k.opts.backoff ?? { initialSeconds: 1, maxSeconds: 20 };
    if (c.crashes <= 1) return 0;
    return Math.min(b.initialSeconds * 2 ** (c.crashes - 2), b.maxSeconds) * 1000;
  }

  /** Runs a container until it should not run any more (pod terminating, or restart policy says done). */
  private async containerLoop(c: CState): Promise<void> {
    const policy = this.pod.spec.restartPolicy ?? 'Always';
    const signal = this.abort.signal;
    const image = c.spec.image as string;
    let pullFailures = 0;
    while (!signal.aborted) {
      // Image.
      let entry: ReturnType<ImageCatalog['resolve']>;
      try {
        entry = this.k.opts.catalog.resolve(image);
      } catch (err) {
        if (!(err instanceof ImagePullError)) throw err;
        pullFailures++;
        c.state = { waiting: { reason: 'ErrImagePull', message: err.message } };
        this.refreshConditions();
        this.writeStatus();
        this.event('Normal', 'Pulling', `Pulling image "${image}"`, c);
        this.event('Warning', 'Failed', err.message, c);
        this.event('Warning', 'Failed', 'Error: ErrImagePull', c);
        const b = this.k.opts.backoff ?? { initialSeconds: 1, maxSeconds: 20 };
        const wait = Math.min(b.initialSeconds * 2 ** (pullFailures - 1), b.maxSeconds) * 1000;
        await sleep(Math.min(300, wait), signal);
        if (signal.aborted) break;
        c.state = {
          waiting: { reason: 'ImagePullBackOff', message: `Back-off pulling image "${image}": ${err.message}` },
        };
        this.writeStatus();
        this.event('Normal', 'BackOff', `Back-off pulling image "${image}"`, c);
        this.event('Warning', 'Failed', 'Error: ImagePullBackOff', c);
        await sleep(wait, signal);
        continue;
      }
      pullFailures = 0;
      this.event('Normal', 'Pulled', `Container image "${image}" already present on machine`, c);
      // Environment and configuration.
      let env: Record<string, string>;
      try {
        env = await containerEnv(
          this.k.opts.client,
          c.spec,
          { pod: this.pod, podIP: this.ip, hostIP: this.k.hostIP, nodeName: this.k.opts.nodeName },
          { ...this.k.serviceEnv(this.pod), ...(entry.env ?? {}) },
        );
      } catch (err) {
        const msg = err instanceof EnvError ? err.message : (err as Error).message;
        c.state = { waiting: { reason: 'CreateContainerConfigError', message: msg } };
        this.writeStatus();
        this.event('Warning', 'Failed', `Error: ${msg}`, c);
        await sleep(2000, signal);
        continue;
      }
      const mounts = containerMounts(this.pod, c.spec, this.volumeDirs);
      const mapPath = pathMapper(mounts);
      c.cwd = c.spec.workingDir ? (mapPath(c.spec.workingDir) as string) : entry.workingDir;
      c.env = env;
      c.runtimeConfig = join(this.dir, `runtime-${c.spec.name}.json`);
      writeFileSync(c.runtimeConfig, JSON.stringify(this.runtimeConfig(mounts), null, 2));
      const argv = containerArgv(entry, c.spec, env);
      if (signal.aborted) break;
      const proc = this.k.opts.runner.start({
        namespace: this.pod.metadata.namespace,
        pod: this.pod.metadata.name,
        container: c.spec.name,
        argv,
        env,
        workingDir: c.cwd,
        logFile: newInstanceLog(c.logDir, c.restartCount),
        runtimeConfig: c.runtimeConfig,
      });
      c.proc = proc;
      c.containerID = `gwlab://${this.uid.slice(0, 8)}-${c.spec.name}-${c.restartCount}`;
      this.event('Normal', 'Created', `Created container ${c.spec.name}`, c);
      const runStart = Date.now();
      // A start error resolves at once; otherwise the process runs.
      const early = await Promise.race([proc.exited, new Promise<undefined>((r) => setImmediate(() => r(undefined)))]);
      if (early?.reason !== 'StartError') {
        this.event('Normal', 'Started', `Started container ${c.spec.name}`, c);
        c.state = { running: { startedAt: rfc3339(proc.startedAt) } };
        c.started = !c.spec.startupProbe;
        c.startupDone = !c.spec.startupProbe;
        c.readiness = undefined;
        this.startProbes(c);
      }
      this.refreshConditions();
      this.writeStatus();
      const exit = await proc.exited;
      this.stopProbes(c);
      for (const e of c.execs) void e.stop(0);
      if (exit.reason === 'StartError') this.event('Warning', 'Failed', `Error: ${exit.message}`, c);
      const terminated = this.terminatedState(exit, c);
      c.ready = false;
      c.started = false;
      c.proc = undefined;
      const ranMs = Date.now() - runStart;
      const b = this.k.opts.backoff ?? { initialSeconds: 1, maxSeconds: 20 };
      if (ranMs > b.maxSeconds * 2000) c.crashes = 0;
      const restart =
        !signal.aborted &&
        (policy === 'Always' ? !c.init || exit.exitCode !== 0 : policy === 'OnFailure' ? exit.exitCode !== 0 : false);
      if (!restart) {
        c.state = { terminated };
        c.done = true;
        this.refreshConditions();
        this.writeStatus();
        break;
      }
      c.crashes++;
      c.lastState = { terminated };
      const wait = this.backoffMs(c);
      if (wait > 0) {
        c.state = {
          waiting: {
            reason: 'CrashLoopBackOff',
            message: `back-off ${goDuration(wait)} restarting failed container=${c.spec.name} pod=${this.pod.metadata.name}_${this.pod.metadata.namespace}(${this.uid})`,
          },
        };
        this.refreshConditions();
        this.writeStatus();
        this.event(
          'Warning',
          'BackOff',
          `Back-off restarting failed container ${c.spec.name} in pod ${this.pod.metadata.name}_${this.pod.metadata.namespace}(${this.uid})`,
          c,
        );
        await sleep(wait, signal);
      }
      if (signal.aborted) {
        c.state = { terminated };
        break;
      }
      c.restartCount++;
    }
  }

  private terminatedState(exit: ContainerExit, c: CState): any {
    return {
      exitCode: exit.exitCode,
      reason: exit.reason,
      // The number of the signal that ended the process (9 for SIGKILL), as the kubelet reports it.
      ...(exit.signal ? { signal: osConstants.signals[exit.signal] ?? 0 } : {}),
      ...(exit.message ? { message: exit.message } : {}),
      startedAt: rfc3339(exit.startedAt),
      finishedAt: rfc3339(exit.finishedAt),
      containerID: c.containerID,
    };
  }

  private runtimeConfig(mounts: PodRuntimeConfig['mounts']): PodRuntimeConfig {
    const o = this.k.opts;
    const domain = o.clusterDomain ?? 'cluster.local';
    return {
      version: 1,
      lab: o.lab,
      pod: {
        namespace: this.pod.metadata.namespace,
        name: this.pod.metadata.name,
        uid: this.uid,
        ip: this.ip,
        loopback: this.k.podLoopback(this.ip),
      },
      hostname: this.pod.spec.hostname ?? this.pod.metadata.name,
      dns: {
        server: o.dns.address,
        port: o.dns.port,
        search: podSearchPath(this.pod.metadata.namespace, domain),
        ndots: 5,
        clusterDomain: domain,
      },
      mounts,
      portShift: o.portShift ? { ...o.portShift, octets: this.k.shiftedOctets } : null,
      labOctets: [o.plan.podOctet, o.plan.serviceOctet, o.plan.lbOctet],
      watchdog: o.runner.watchdogTarget(),
    };
  }

  private probeTarget(c: CState): ProbeTarget {
    return {
      podIP: this.ip,
      namedPort: (name) => (c.spec.ports ?? []).find((p: any) => p.name === name)?.containerPort,
      effectivePort: (port) => this.k.effectivePort(this.ip, port),
      exec: (command, timeoutMs) => this.exec(c.spec.name, command, timeoutMs),
    };
  }

  private startProbes(c: CState): void {
    const t = this.probeTarget(c);
    const label = { startup: 'Startup', liveness: 'Liveness', readiness: 'Readiness' } as const;
    const mk = (kind: 'startup' | 'liveness' | 'readiness', probe: any) =>
      new ProbeWorker(
        kind,
        probe,
        t,
        (ok, message) => this.onProbe(c, kind, ok, message),
        (message) => this.event('Warning', 'Unhealthy', `${label[kind]} probe failed: ${message}`, c),
      );
    c.probes = [];
    if (c.spec.startupProbe) c.probes.push(mk('startup', c.spec.startupProbe));
    else this.startSteadyProbes(c, mk);
    for (const p of c.probes) p.start();
    if (!c.spec.readinessProbe && c.startupDone) c.ready = true;
    (c as any).mk = mk;
  }

  private startSteadyProbes(c: CState, mk: (kind: 'liveness' | 'readiness', probe: any) => ProbeWorker): ProbeWorker[] {
    const started: ProbeWorker[] = [];
    if (c.spec.livenessProbe) started.push(mk('liveness', c.spec.livenessProbe));
    if (c.spec.readinessProbe) started.push(mk('readiness', c.spec.readinessProbe));
    c.probes.push(...started);
    return started;
  }

  private stopProbes(c: CState): void {
    for (const p of c.probes) p.stop();
    c.probes = [];
  }

  private onProbe(c: CState, kind: 'startup' | 'liveness' | 'readiness', ok: boolean, message: string): void {
    if (!c.proc?.running) return;
    if (kind === 'startup') {
      if (ok) {
        c.startupDone = true;
        c.started = true;
        for (const p of this.startSteadyProbes(c, (c as any).mk)) p.start();
        if (!c.spec.readinessProbe) c.ready = true;
      } else {
        this.event('Normal', 'Killing', `Container ${c.spec.name} failed startup probe, will be restarted`, c);
        void c.proc.stop(this.pod.spec.terminationGracePeriodSeconds ?? 30);
      }
    } else if (kind === 'liveness') {
      if (!ok) {
        this.event('Normal', 'Killing', `Container ${c.spec.name} failed liveness probe, will be restarted`, c);
        void c.proc.stop(this.pod.spec.terminationGracePeriodSeconds ?? 30);
      }
    } else {
      c.readiness = ok;
      c.ready = ok && c.startupDone;
    }
    this.refreshConditions();
    this.writeStatus();
    void message;
  }

  private refreshConditions(): void {
    const apps = [...this.containers.values()].filter((c) => !c.init);
    const inits = [...this.containers.values()].filter((c) => c.init);
    if (inits.length === 0 || this.initDone) this.setCondition('Initialized', true);
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
    // Phase.
    const failedInit = inits.some((c) => c.done && c.state.terminated && c.state.terminated.exitCode !== 0);
    if (failedInit) this.phase = 'Failed';
    else if (!this.initDone && inits.length) this.phase = 'Pending';
    else if (apps.every((c) => c.done)) {
      this.phase = apps.every((c) => c.state.terminated?.exitCode === 0) ? 'Succeeded' : 'Failed';
    } else if (apps.some((c) => c.state.running || c.restartCount > 0 || c.lastState.terminated || c.done)) {
      this.phase = 'Running';
    } else this.phase = 'Pending';
  }

  private status(): any {
    const order = ['PodReadyToStartContainers', 'Initialized', 'Ready', 'ContainersReady', 'PodScheduled'];
    const cs = (c: CState) => ({
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
    const all = [...this.containers.values()];
    return {
      phase: this.phase,
      conditions: order.filter((t) => this.conditions.has(t)).map((t) => this.conditions.get(t)),
      hostIP: this.k.hostIP,
      hostIPs: [{ ip: this.k.hostIP }],
      podIP: this.ip,
      podIPs: [{ ip: this.ip }],
      startTime: this.startTime,
      ...(all.some((c) => c.init) ? { initContainerStatuses: all.filter((c) => c.init).map(cs) } : {}),
      containerStatuses: all.filter((c) => !c.init).map(cs),
    };
  }

  /** Coalesces status writes: one PATCH in flight, the latest state wins. */
  private writeStatus(): void {
    if (this.gone) return;
    this.statusDirty = true;
    if (this.statusWriting) return;
    this.statusWriting = (async () => {
      while (this.statusDirty && !this.gone) {
        this.statusDirty = false;
        try {
          await this.k.opts.client.request(
            'PATCH',
            `/api/v1/namespaces/${this.pod.metadata.namespace}/pods/${this.pod.metadata.name}/status`,
            { status: this.status() },
            'application/merge-patch+json',
          );
        } catch (err) {
          if (err instanceof KubeError && err.code === 404) this.gone = true;
          else this.log.debug('status update failed', { pod: this.key, err: err as Error });
        }
      }
      this.statusWriting = undefined;
    })();
  }

  /** Flushes pending status writes (tests, shutdown). */
  async flushStatus(): Promise<void> {
    while (this.statusWriting) await this.statusWriting;
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
      for (const c of this.containers.values()) this.stopProbes(c);
      if (deleteObject) await this.k.finalizeDeletion(this.pod);
      this.gone = true;
      await this.flushStatus();
      if (this.ip) this.k.releaseIP(this.ip);
      rmSync(this.dir, { recursive: true, force: true });
      this.k.forget(this.uid);
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
    const proc = this.k.opts.runner.start({
      namespace: this.pod.metadata.namespace,
      pod: this.pod.metadata.name,
      container: `${container}.exec.${this.k.nextExecId()}`,
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
