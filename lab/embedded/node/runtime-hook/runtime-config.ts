// The contract between the lab process and the pod runtime hook (pod-hook.ts): one JSON file per pod, named by the
// environment variable below, which every Node process of the pod inherits together with NODE_OPTIONS.
// This module must stay free of imports beyond node builtins: the hook loads it into every pod process.
import { readFileSync } from 'node:fs';

export const RUNTIME_ENV = 'GWLAB_POD_RUNTIME';

export interface PodRuntimeMount {
  /** Absolute path the program asks for, e.g. `/etc/envoy` or `/etc/envoy/envoy.yaml` (subPath mounts). */
  mountPath: string;
  /** Where the content really is: `<state>/pods/<uid>/volumes/<name>[/<subPath>]`. */
  hostPath: string;
  readOnly?: boolean;
}

export interface PodRuntimeConfig {
  version: 1;
  lab: string;
  /**
   * `loopback` is the pod loopback (lab/state.ts `podLoopback`): what 127.0.0.1, ::1 and localhost mean inside the
   * pod. Listeners on those bind it, wildcard listeners bind it and the pod IP, and other pods are refused on it.
   */
  pod: { namespace: string; name: string; uid: string; ip: string; loopback: string };
  /** What `os.hostname()` returns: the pod name (or `spec.hostname`). */
  hostname: string;
  dns: {
    /** The cluster DNS server (ClusterDns) that answers names under `clusterDomain`. */
    server: string;
    port: number;
    /** `<ns>.svc.<domain>`, `svc.<domain>`, `<domain>`, as a kubelet writes into resolv.conf. */
    search: string[];
    ndots: number;
    clusterDomain: string;
  };
  mounts: PodRuntimeMount[];
  /**
   * Unprivileged labs cannot bind ports below 1024 on loopback addresses, so every such port in the lab's pod and
   * service ranges is shifted by `offset` on both sides (listen in pods, connect from pods, the service proxy).
   */
  portShift?: { below: number; offset: number; octets: number[] } | null;
  /** Second octets of 127/8 that belong to this lab (pods, services, load balancers): destinations that get the pod IP as source. */
  labOctets?: number[];
  /** The lab process: when it is gone, every Node process of the pod exits (third line of defence against orphans). */
  watchdog?: { pid: number; startTime: string; intervalMs?: number } | null;
}

export function readRuntimeConfig(path: string): PodRuntimeConfig {
  let raw: string;
  try {
    raw = readFileSync(path, 'utf8');
  } catch (err) {
    throw new Error(`gwlab pod runtime: cannot read ${RUNTIME_ENV}=${path}: ${(err as Error).message}`);
  }
  const cfg = JSON.parse(raw) as PodRuntimeConfig;
  if (cfg.version !== 1 || !cfg.pod?.ip || !cfg.dns?.server) {
    throw new Error(
      `gwlab pod runtime: ${path} is not a version 1 pod runtime config (pod.ip and dns.server are required)`,
    );
  }
  // Written by a lab process older than the pod loopback (its pods restart under a newer hook, e.g. after
  // lab:reload): the pod's loopback is its IP, unisolated, as it was then.
  cfg.pod.loopback ??= cfg.pod.ip;
  return cfg;
}

/** Cluster DNS search path of a pod in namespace `ns`, as the kubelet writes it (ClusterFirst policy). */
export function podSearchPath(ns: string, clusterDomain = 'cluster.local'): string[] {
  return [`${ns}.svc.${clusterDomain}`, `svc.${clusterDomain}`, clusterDomain];
}
