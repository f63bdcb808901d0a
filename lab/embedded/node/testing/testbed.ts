// A node without an API server, for tests and benchmarks: a claimed lab address range, the cluster DNS server, the
// service proxy, a process runner, and helpers to start "pods" (processes with the pod runtime hook). Everything it
// starts is stopped by close(), which tests call in afterAll even when they fail.
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type AddressPlan, addressPlan, claimLabIndex, podLoopback } from '../../../state.ts';
import { AddressPool, wellKnownServiceIPs } from '../../ipam.ts';
import { ClusterDns } from '../dns/cluster-dns.ts';
import { newInstanceLog, readLog } from '../runtime/logs.ts';
import { type ContainerExit, type ContainerProcess, ProcessRunner, type RunnerOptions } from '../runtime/runner.ts';
import { type PodRuntimeConfig, podSearchPath } from '../runtime-hook/runtime-config.ts';
import { ServiceProxy, type ServiceProxyOptions } from '../service-proxy/service-proxy.ts';

export interface TestPod {
  namespace: string;
  name: string;
  uid: string;
  ip: string;
  /** The pod loopback: its `lo` (lab/state.ts podLoopback). */
  loopback: string;
  dir: string;
  runtimeConfig: string;
  proc: ContainerProcess;
  logFile: string;
  logs(): string;
}

export interface TestPodSpec {
  namespace?: string;
  name: string;
  argv: string[];
  env?: Record<string, string>;
  workingDir?: string;
  /** Volumes: mountPath → files (name → content) written under the pod's volume folder. */
  volumes?: Record<string, Record<string, string>>;
  container?: string;
}

export class Testbed {
  readonly lab = `t-${randomBytes(3).toString('hex')}`;
  readonly root: string;
  readonly plan: AddressPlan;
  readonly dns: ClusterDns;
  readonly proxy: ServiceProxy;
  readonly runner: ProcessRunner;
  readonly podIPs: AddressPool;
  readonly serviceIPs: AddressPool;
  readonly lbIPs: AddressPool;
  private readonly release: () => Promise<void>;
  private readonly pods: TestPod[] = [];

  private constructor(
    plan: AddressPlan,
    release: () => Promise<void>,
    opts: { runner?: Partial<RunnerOptions>; proxy?: ServiceProxyOptions },
  ) {
    this.plan = plan;
    this.release = release;
    this.root = mkdtempSync(join(tmpdir(), 'gwlab-node-'));
    const wk = wellKnownServiceIPs(plan);
    this.dns = new ClusterDns({ address: wk.dns });
    this.proxy = new ServiceProxy(opts.proxy);
    this.runner = new ProcessRunner({ lab: this.lab, ...opts.runner });
    this.podIPs = new AddressPool(plan.podOctet);
    this.serviceIPs = new AddressPool(plan.serviceOctet, [wk.kubernetes, wk.dns]);
    this.lbIPs = new AddressPool(plan.lbOctet);
  }

  static async start(opts: { runner?: Partial<RunnerOptions>; proxy?: ServiceProxyOptions } = {}): Promise<Testbed> {
    const claim = await claimLabIndex();
    const tb = new Testbed(addressPlan(claim.index), claim.release, opts);
    try {
      await tb.dns.start();
    } catch (err) {
      await tb.close();
      throw err;
    }
    return tb;
  }

  runtimeConfigFor(namespace: string, name: string, uid: string, ip: string, mounts: PodRuntimeConfig['mounts']) {
    const cfg: PodRuntimeConfig = {
      version: 1,
      lab: this.lab,
      pod: { namespace, name, uid, ip, loopback: podLoopback(this.plan, ip) },
      hostname: name,
      dns: {
        server: this.dns.endpoint.address,
        port: this.dns.endpoint.port,
        search: podSearchPath(namespace),
        ndots: 5,
        clusterDomain: 'cluster.local',
      },
      mounts,
      labOctets: [this.plan.podOctet, this.plan.serviceOctet, this.plan.lbOctet],
      watchdog: this.runner.watchdogTarget(),
    };
    return cfg;
  }

  /** Starts a pod of one container; resolves once the process is spawned. */
  startPod(spec: TestPodSpec): TestPod {
    const namespace = spec.namespace ?? 'default';
    const uid = randomBytes(8).toString('hex');
    const dir = join(this.root, 'pods', uid);
    const mounts: PodRuntimeConfig['mounts'] = [];
    for (const [mountPath, files] of Object.entries(spec.volumes ?? {})) {
      const hostPath = join(dir, 'volumes', `v${mounts.length}`);
      mkdirSync(hostPath, { recursive: true });
      for (const [f, content] of Object.entries(files)) writeFileSync(join(hostPath, f), content);
      mounts.push({ mountPath, hostPath });
    }
    const ip = this.podIPs.allocate();
    const cfg = this.runtimeConfigFor(namespace, spec.name, uid, ip, mounts);
    mkdirSync(dir, { recursive: true });
    const runtimeConfig = join(dir, 'runtime.json');
    writeFileSync(runtimeConfig, JSON.stringify(cfg, null, 2));
    const container = spec.container ?? 'main';
    const logFile = newInstanceLog(join(dir, 'logs', container), 0);
    const proc = this.runner.start({
      namespace,
      pod: spec.name,
      container,
      argv: spec.argv,
      env: spec.env ?? {},
      workingDir: spec.workingDir,
      logFile,
      runtimeConfig,
    });
    const pod: TestPod = {
      namespace,
      name: spec.name,
      uid,
      ip,
      loopback: cfg.pod.loopback,
      dir,
      runtimeConfig,
      proc,
      logFile,
      logs: () => readLog(logFile),
    };
    this.pods.push(pod);
    return pod;
  }

  /** Runs a one-shot program with an existing pod's identity (like `kubectl exec`); resolves with its exit and output. */
  async execIn(
    pod: TestPod,
    argv: string[],
    env: Record<string, string> = {},
  ): Promise<ContainerExit & { output: string }> {
    const n = Date.now() + Math.random();
    const logFile = join(pod.dir, 'logs', `exec-${n}.log`);
    mkdirSync(join(pod.dir, 'logs'), { recursive: true });
    const proc = this.runner.start({
      namespace: pod.namespace,
      pod: pod.name,
      container: `exec-${n}`,
      argv,
      env,
      logFile,
      runtimeConfig: pod.runtimeConfig,
    });
    const exit = await proc.exited;
    return { ...exit, output: readLog(logFile) };
  }

  async close(): Promise<void> {
    await this.runner.close(2).catch(() => undefined);
    await this.proxy.stop().catch(() => undefined);
    await this.dns.stop().catch(() => undefined);
    await this.release().catch(() => undefined);
    rmSync(this.root, { recursive: true, force: true });
  }
}

/** Polls `fn` until it returns a truthy value or the time is up. */
export async function eventually<T>(fn: () => T | Promise<T>, timeoutMs = 10_000, everyMs = 25): Promise<T> {
  const end = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > end) throw new Error(`condition not met in ${timeoutMs} ms${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** Waits until a container's log has `text`: the runner appends what a process writes asynchronously. */
export async function waitForLog(file: string, text: string): Promise<void> {
  const end = Date.now() + 10_000;
  while (!readLog(file).includes(text)) {
    if (Date.now() > end) throw new Error(`"${text}" not in ${file}: ${readLog(file)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
