// The embedded cluster in one process (the "lab process"): API server, API-machinery and workload controllers, and
// the node agent, on a loopback address range claimed machine-wide. `lab:up` runs it in the background
// (lab/embedded/main.ts); tests can run it in-process.
import { createWriteStream, mkdirSync } from 'node:fs';
import { type Level, LogRegistry } from '../../system/shared/log.ts';
import {
  type AddressPlan,
  addressPlan,
  claimLabIndex,
  gwlabHome,
  type LabRecord,
  labPaths,
  readLabRecord,
  writeLabRecord,
} from '../state.ts';
import { type ApiServerHandle, startApiServer } from './apiserver/index.ts';
import { KubeClient } from './client/kube-client.ts';
import type { ApiMachinery } from './controllers/apimachinery.ts';
import type { WorkloadControllers } from './controllers/workloads.ts';
import type { NodeAgent } from './node/agent.ts';
import { killTaggedProcesses } from './node/runtime/orphans.ts';

/**
 * The controllers' and the node agent's modules (~140 ms of CPU from the compile cache), loaded once the API server
 * serves: lab:up starts its install then (the lab record says `starting`), and they load meanwhile.
 */
const loadComponents = () =>
  Promise.all([
    import('./controllers/workloads.ts'),
    import('./controllers/apimachinery.ts'),
    import('./node/agent.ts'),
  ]).then(([workloads, machinery, agent]) => ({ ...workloads, ...machinery, ...agent }));

export interface EmbeddedClusterOptions {
  name: string;
  home?: string;
  /** Level of the lab's own components (default info). */
  logLevel?: Level;
  /** Where the lab's JSON log lines go; default: the lab's lab.log (appended). */
  logSink?: (line: string) => void;
  /** Serve every LoadBalancer port p on p+8000 (tests the documented fallback even as root). */
  forceLbPortFallback?: boolean;
  /** Delay before a LoadBalancer Service gets its address (default 1 s, like a cloud LB that needs a moment). */
  lbProvisionDelayMs?: number;
  /** CrashLoopBackOff / ImagePullBackOff back-off (default 1 s doubling to 20 s). */
  backoff?: { initialSeconds: number; maxSeconds: number };
  /** kube-apiserver's --service-account-max-token-expiration (seconds): short-lived pod tokens, renewed in seconds. */
  serviceAccountMaxTokenExpirationSeconds?: number;
  /** Called (and awaited) once the API server serves and the record says `starting`, before the rest starts. */
  onServing?: (apiServer: ApiServerHandle) => Promise<void> | void;
}

/** Environment variables of the lab process that stand for its flags (lab:up passes its environment through). */
export const BACKOFF_ENV = 'GWLAB_CRASH_BACKOFF';
export const LB_DELAY_ENV = 'GWLAB_LB_DELAY_MS';
// GWLAB_SA_TOKEN_MAX_EXPIRATION (--sa-token-max-expiration) is in process.ts: lab:up checks it before starting this.

/**
 * `--crash-backoff` / GWLAB_CRASH_BACKOFF: `<initial>:<max>` in seconds (fractions allowed), e.g. `0.5:10`. The first
 * restart is immediate, then the back-off starts at initial and doubles up to max. Throws with the reason.
 */
export function parseBackoff(text: string): { initialSeconds: number; maxSeconds: number } {
  const m = /^\s*(\d+(?:\.\d+)?)\s*:\s*(\d+(?:\.\d+)?)\s*$/.exec(text);
  if (!m) throw new Error(`${JSON.stringify(text)} is not <initial>:<max> in seconds, e.g. 1:20`);
  const initialSeconds = Number(m[1]);
  const maxSeconds = Number(m[2]);
  if (initialSeconds <= 0) throw new Error(`initial back-off must be > 0 s, got ${initialSeconds}`);
  if (maxSeconds < initialSeconds) {
    throw new Error(`max back-off (${maxSeconds} s) must be >= initial back-off (${initialSeconds} s)`);
  }
  return { initialSeconds, maxSeconds };
}

/** `--lb-delay-ms` / GWLAB_LB_DELAY_MS: a whole number of milliseconds. Throws with the reason. */
export function parseDelayMs(text: string): number {
  if (!/^\s*\d+\s*$/.test(text)) throw new Error(`${JSON.stringify(text)} is not a whole number of milliseconds`);
  return Number(text);
}

export interface EmbeddedCluster {
  name: string;
  home: string;
  plan: AddressPlan;
  apiServer: ApiServerHandle;
  kubeconfigPath: string;
  machinery: ApiMachinery;
  controllers: WorkloadControllers;
  node: NodeAgent;
  logs: LogRegistry;
  /** Stops pods (graceful), controllers and the API server, and releases the address range. */
  stop(): Promise<void>;
}

/** The lab's log: the caller's sink, or lab.log in the lab's folder. */
function openLabLog(
  opts: EmbeddedClusterOptions,
  file: string,
): { logs: LogRegistry; logFile?: ReturnType<typeof createWriteStream> } {
  if (opts.logSink) return { logs: new LogRegistry({ level: opts.logLevel ?? 'info', sink: opts.logSink }) };
  const logFile = createWriteStream(file, { flags: 'a' });
  const logs = new LogRegistry({ level: opts.logLevel ?? 'info', sink: (line) => logFile.write(line + '\n') });
  return { logs, logFile };
}

/** What lab.json says of a running embedded lab (lab/state.ts). */
function labRecordFor(opts: EmbeddedClusterOptions, plan: AddressPlan, apiServer: ApiServerHandle): LabRecord {
  return {
    name: opts.name,
    index: plan.index,
    backend: 'embedded',
    pid: process.pid,
    apiServerPort: apiServer.port,
    apiServerUrl: apiServer.url,
    startedAt: new Date().toISOString(),
    kubeconfig: apiServer.kubeconfigPath,
    context: `gwlab-${opts.name}`,
    addressPlan: plan,
    forceLbPortFallback: !!opts.forceLbPortFallback,
    ...(opts.serviceAccountMaxTokenExpirationSeconds
      ? { saTokenMaxExpirationSeconds: opts.serviceAccountMaxTokenExpirationSeconds }
      : {}),
  };
}

export async function startEmbeddedCluster(opts: EmbeddedClusterOptions): Promise<EmbeddedCluster> {
  const home = opts.home ?? gwlabHome();
  const paths = labPaths(opts.name, home);
  mkdirSync(paths.root, { recursive: true });
  const { logs, logFile } = openLabLog(opts, paths.labLog);
  const log = logs.logger('lab');

  const previous = readLabRecord(opts.name, home);
  const claim = await claimLabIndex(previous?.index);
  const plan = addressPlan(claim.index);
  const cleanups: (() => Promise<unknown>)[] = [() => claim.release()];
  const unwind = async () => {
    for (const f of cleanups.splice(0).reverse()) {
      try {
        await f();
      } catch (err) {
        log.warn('cleanup step failed', { err });
      }
    }
  };
  try {
    const t0 = performance.now();
    const apiServer = await startApiServer({
      labName: opts.name,
      home,
      addressPlan: plan,
      logRegistry: logs,
      serviceAccountMaxTokenExpirationSeconds: opts.serviceAccountMaxTokenExpirationSeconds,
    });
    cleanups.push(() => apiServer.stop());
    const record = labRecordFor(opts, plan, apiServer);
    // The API server serves: lab:up may start installing while the controllers and the node agent start.
    writeLabRecord({ ...record, starting: true }, home);
    await opts.onServing?.(apiServer);
    const { startWorkloadControllers, startApiMachinery, startNodeAgent } = await loadComponents();
    // One identity (and token) for the controllers of kube-controller-manager.
    const controllerManager = apiServer.credentials({ user: 'system:kube-controller-manager' });
    // Over HTTPS (no loopback socket), one request first: its TLS session is the one the ~35 connections of the
    // controllers and the node agent resume.
    if (controllerManager.server.startsWith('https:')) {
      const client = new KubeClient(controllerManager);
      await client.request('GET', '/version').finally(() => client.close());
    }
    const controllers = startWorkloadControllers(controllerManager, logs, {
      lbOctet: plan.lbOctet,
      provisionDelayMs: opts.lbProvisionDelayMs ?? 1000,
    });
    cleanups.push(() => controllers.stop());
    // The API-machinery controllers and the node agent start side by side (each waits on its own requests).
    const [machineryStarted, nodeStarted] = await Promise.allSettled([
      startApiMachinery(controllerManager, logs),
      startNodeAgent({
        labName: opts.name,
        home,
        plan,
        apiServer,
        logs,
        forceLbPortFallback: opts.forceLbPortFallback,
        backoff: opts.backoff,
      }),
    ]);
    if (machineryStarted.status === 'fulfilled') cleanups.push(() => machineryStarted.value.stop());
    if (nodeStarted.status === 'fulfilled') {
      const node = nodeStarted.value;
      cleanups.push(async () => {
        await node.stop();
        // Anything that survived a graceful stop (a pod ignoring SIGTERM past its grace period, or its children).
        await killTaggedProcesses({ run: node.runner.runId });
      });
    }
    if (machineryStarted.status === 'rejected') throw machineryStarted.reason;
    if (nodeStarted.status === 'rejected') throw nodeStarted.reason;
    const machinery = machineryStarted.value;
    const node = nodeStarted.value;
    node.proxy.on('bind', controllers.loadBalancers.onBind);
    writeLabRecord(record, home);
    log.info('embedded cluster started', {
      ms: Math.round(performance.now() - t0),
      apiServer: apiServer.url,
      podRange: `127.${plan.podOctet}.0.0/16`,
      podLoopbackRange: `127.${plan.loopOctet}.0.0/16`,
      serviceRange: `127.${plan.serviceOctet}.0.0/16`,
      lbRange: `127.${plan.lbOctet}.0.0/16`,
    });
    let stopped: Promise<void> | undefined;
    return {
      name: opts.name,
      home,
      plan,
      apiServer,
      kubeconfigPath: apiServer.kubeconfigPath,
      machinery,
      controllers,
      node,
      logs,
      stop() {
        stopped ??= (async () => {
          log.info('embedded cluster stopping');
          await unwind();
          log.info('embedded cluster stopped');
          await new Promise<void>((r) => (logFile ? logFile.end(r) : r()));
        })();
        return stopped;
      },
    };
  } catch (err) {
    await unwind();
    logFile?.end();
    throw err;
  }
}
