// The seams inside the kubelet, cut where Kubernetes cuts its own (pkg/kubelet: kubelet.go, pod_workers.go,
// kuberuntime/kuberuntime_container.go, prober/, status/status_manager.go): the kubelet's options, what a pod's
// worker needs of the kubelet (PodHost), what the container loop, the probes and the status manager need of the
// pod's worker (PodContext), and the per-container state they share (ContainerState).
import { join } from 'node:path';
import type { Logger } from '../../../../system/shared/log.ts';
import type { AddressPlan } from '../../../state.ts';
import type { EventRecorder } from '../../client/events.ts';
import type { KubeClient } from '../../client/kube-client.ts';
import type { ContainerProcess, ProcessRunner } from '../runtime/runner.ts';
import type { ImageCatalog } from './images.ts';
import type { ProbeWorker } from './probes.ts';

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

/** What a pod's worker needs of the kubelet (kubelet.ts implements it). */
export interface PodHost {
  readonly opts: KubeletOptions;
  readonly events: EventRecorder;
  readonly hostIP: string;
  /** Second octets whose ports below portShift.below are shifted: pod IPs, pod loopbacks and ClusterIPs. */
  readonly shiftedOctets: number[];
  /** Port really bound for `port` on `ip` (low-port shift of unprivileged labs). */
  effectivePort(ip: string, port: number): number;
  /** The pod loopback of the pod at `podIP` (lab/state.ts). */
  podLoopback(podIP: string): string;
  allocateIP(pod: any): string;
  releaseIP(ip: string): void;
  /** The worker of `uid` is done: the kubelet forgets it. */
  forget(uid: string): void;
  /** The Service-link and `kubernetes` variables of a pod's containers. */
  serviceEnv(pod: any): Record<string, string>;
  /** Deletes a pod object whose processes are gone (grace 0 ends the graceful deletion). */
  finalizeDeletion(pod: any): Promise<void>;
  nextExecId(): number;
}

export type EventType = 'Normal' | 'Warning';

/** What the container loop, the probes and the status manager need of the pod's worker (pod-worker.ts). */
export interface PodContext {
  readonly pod: any;
  readonly uid: string;
  /** `<pods>/<uid>`. */
  readonly dir: string;
  readonly ip: string;
  readonly host: PodHost;
  /** Aborted when the pod stops. */
  readonly signal: AbortSignal;
  /** Volume name → host folder, once the volumes are set up. */
  readonly volumeDirs: Map<string, string>;
  readonly containers: Map<string, ContainerState>;
  /** Every init container has succeeded. */
  readonly initDone: boolean;
  event(type: EventType, reason: string, message: string, c?: ContainerState): void;
  /** Recomputes the pod's conditions and phase from its containers. */
  refreshConditions(): void;
  /** Schedules a status write (coalesced). */
  writeStatus(): void;
  /** Runs a command to completion in a container (exec probes). */
  exec(container: string, command: string[], timeoutMs: number): Promise<{ exitCode: number; output: string }>;
}

/** One container of a pod on this node: its spec, its current process and what its status reports. */
export type ContainerState = {
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
  /** Starts the steady probes (liveness, readiness) once the startup probe has succeeded. */
  probeFactory?: (kind: 'liveness' | 'readiness', probe: any) => ProbeWorker;
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

/** A container's state before its first start. */
export function newContainerState(spec: any, init: boolean, podDir: string): ContainerState {
  return {
    spec,
    init,
    restartCount: 0,
    state: { waiting: { reason: init ? 'PodInitializing' : 'ContainerCreating' } },
    lastState: {},
    ready: false,
    started: false,
    probes: [],
    startupDone: !spec.startupProbe,
    crashes: 0,
    execs: new Set(),
    done: false,
    logDir: join(podDir, 'logs', spec.name),
  };
}
