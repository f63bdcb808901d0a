// The node agent of the embedded cluster, composed: cluster DNS, service proxy (fed by ServiceSync), process runner,
// image catalog, kubelet, and the pods/log, pods/portforward and pods/exec subresources on the API server.
// The lab process starts it after the API server: `const node = await startNodeAgent({...})`, `await node.stop()`.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LogRegistry } from '../../../system/shared/log.ts';
import { type AddressPlan, gwlabHome, labPaths } from '../../state.ts';
import type { ApiServerHandle } from '../apiserver/index.ts';
import { KubeClient } from '../client/kube-client.ts';
import { canBindLowPorts, wellKnownServiceIPs } from '../ipam.ts';
import { ClusterDns } from './dns/cluster-dns.ts';
import { ImageCatalog } from './kubelet/images.ts';
import { Kubelet } from './kubelet/kubelet.ts';
import { systemImages } from './kubelet/system-images.ts';
import { killTaggedProcesses } from './runtime/orphans.ts';
import { ProcessRunner } from './runtime/runner.ts';
import { ServiceProxy } from './service-proxy/service-proxy.ts';
import { ServiceSync } from './service-proxy/service-sync.ts';
import { execHandler } from './streaming/exec.ts';
import { podLogHandler } from './streaming/pod-log.ts';
import { type PortForwardStats, portForwardHandler } from './streaming/portforward.ts';

export interface NodeAgentOptions {
  labName: string;
  home?: string;
  plan: AddressPlan;
  apiServer: ApiServerHandle;
  logs: LogRegistry;
  /** Default `<lab>-control-plane` (kind's naming). */
  nodeName?: string;
  /** Serve every LoadBalancer port p on p+8000 (the lab flag). */
  forceLbPortFallback?: boolean;
  /** Shift ports below 1024 (auto: when this process cannot bind them). */
  lowPortShift?: boolean;
  /** CrashLoopBackOff / ImagePullBackOff delays (default 1 s doubling to 20 s). */
  backoff?: { initialSeconds: number; maxSeconds: number };
}

export interface NodeAgent {
  nodeName: string;
  kubelet: Kubelet;
  dns: ClusterDns;
  proxy: ServiceProxy;
  services: ServiceSync;
  runner: ProcessRunner;
  catalog: ImageCatalog;
  /** Port-forward connections served, by form. */
  portForwardStats: PortForwardStats;
  stop(gracePeriodSeconds?: number): Promise<void>;
}

const RUN_FILE = '.node-run';

export async function startNodeAgent(opts: NodeAgentOptions): Promise<NodeAgent> {
  const home = opts.home ?? gwlabHome();
  const paths = labPaths(opts.labName, home);
  const log = opts.logs.logger('node-agent');
  mkdirSync(paths.pods, { recursive: true });
  // Processes left by a previous run of this lab that crashed past every safety net.
  try {
    const prev = readFileSync(join(paths.pods, RUN_FILE), 'utf8').trim();
    if (prev) {
      const killed = await killTaggedProcesses({ run: prev });
      if (killed.length) log.warn('killed processes left by a previous run', { run: prev, count: killed.length });
    }
  } catch {
    // first run
  }
  const runner = new ProcessRunner({ lab: opts.labName, log: opts.logs.logger('runner') });
  writeFileSync(join(paths.pods, RUN_FILE), runner.runId + '\n');
  const lowShift = opts.lowPortShift ?? !(await canBindLowPorts(`127.${opts.plan.serviceOctet}.0.1`));
  const shift = lowShift ? { below: 1024, offset: 8000 } : null;
  const dns = new ClusterDns({
    address: wellKnownServiceIPs(opts.plan).dns,
    forceFallback: lowShift,
    log: opts.logs.logger('cluster-dns'),
  });
  const dnsEndpoint = await dns.start();
  const proxy = new ServiceProxy({
    forceLbPortFallback: opts.forceLbPortFallback,
    lowPortShift: shift,
    log: opts.logs.logger('service-proxy'),
  });
  const nodeName = opts.nodeName ?? `${opts.labName}-control-plane`;
  const client = new KubeClient(opts.apiServer.credentials({ user: `system:node:${nodeName}` }));
  const catalog = new ImageCatalog({ home, builtins: systemImages() });
  const services = new ServiceSync({ client, proxy, dns, log: opts.logs.logger('service-sync') });
  services.start();
  const kubelet = new Kubelet({
    client,
    nodeName,
    lab: opts.labName,
    podsDir: paths.pods,
    plan: opts.plan,
    runner,
    catalog,
    dns: dnsEndpoint,
    caPem: opts.apiServer.caPem,
    portShift: shift,
    backoff: opts.backoff,
    log: opts.logs.logger('kubelet'),
  });
  await kubelet.start();
  opts.apiServer.registerSubresource('pods', 'log', podLogHandler(kubelet));
  const portForwardStats: PortForwardStats = { websocketSpdy: 0, websocketChannels: 0, spdyUpgrade: 0 };
  opts.apiServer.registerSubresource('pods', 'portforward', portForwardHandler(kubelet, portForwardStats));
  opts.apiServer.registerSubresource('pods', 'exec', execHandler(kubelet));
  log.info('node agent ready', { node: nodeName, dns: dnsEndpoint, lowPortShift: lowShift, run: runner.runId });
  return {
    nodeName,
    kubelet,
    dns,
    proxy,
    services,
    runner,
    catalog,
    portForwardStats,
    stop: async (grace = 5) => {
      services.stop();
      await kubelet.stop(grace);
      await runner.close(grace);
      await proxy.stop();
      await dns.stop();
      await client.close();
    },
  };
}
