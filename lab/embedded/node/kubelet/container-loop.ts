// One container's life on the node, as the kubelet's container runtime manager runs it
// (pkg/kubelet/kuberuntime/kuberuntime_container.go, images/image_manager.go): resolve the image through the catalog
// (ErrImagePull, then ImagePullBackOff), build the environment (CreateContainerConfigError when a reference is
// missing), write the pod runtime hook's config with the container's mounts, start it through the runner, and when it
// exits decide by restartPolicy whether it runs again, after the CrashLoopBackOff back-off.
import { writeFileSync } from 'node:fs';
import { constants as osConstants } from 'node:os';
import { join } from 'node:path';
import { newInstanceLog } from '../runtime/logs.ts';
import type { ContainerExit, ContainerProcess } from '../runtime/runner.ts';
import { pathMapper } from '../runtime-hook/hook-fs.ts';
import { type PodRuntimeConfig, podSearchPath } from '../runtime-hook/runtime-config.ts';
import { startProbes, stopProbes } from './container-probes.ts';
import { containerArgv, type ImageEntry, ImagePullError } from './images.ts';
import { containerEnv, EnvError } from './pod-env.ts';
import { goDuration, rfc3339, sleep } from './time.ts';
import type { ContainerState, PodContext } from './types.ts';
import { containerMounts } from './volumes.ts';

/** Runs a container until it should not run any more (pod terminating, or restart policy says done). */
export async function runContainer(ctx: PodContext, c: ContainerState): Promise<void> {
  const policy = ctx.pod.spec.restartPolicy ?? 'Always';
  const signal = ctx.signal;
  const pull = { failures: 0 };
  while (!signal.aborted) {
    const entry = await resolveImage(ctx, c, pull);
    if (!entry) continue;
    const prepared = await prepare(ctx, c, entry);
    if (!prepared) continue;
    if (signal.aborted) break;
    const { proc, runStart } = await start(ctx, c, prepared);
    const exit = await proc.exited;
    if (!(await afterExit(ctx, c, exit, runStart, policy))) break;
    c.restartCount++;
  }
}

const backoffOf = (ctx: PodContext) => ctx.host.opts.backoff ?? { initialSeconds: 1, maxSeconds: 20 };

/** The image's catalog entry; undefined after an ErrImagePull and its back-off (the caller tries again). */
async function resolveImage(
  ctx: PodContext,
  c: ContainerState,
  pull: { failures: number },
): Promise<ImageEntry | undefined> {
  const image = c.spec.image as string;
  const signal = ctx.signal;
  try {
    const entry = ctx.host.opts.catalog.resolve(image);
    pull.failures = 0;
    ctx.event('Normal', 'Pulled', `Container image "${image}" already present on machine`, c);
    return entry;
  } catch (err) {
    if (!(err instanceof ImagePullError)) throw err;
    pull.failures++;
    c.state = { waiting: { reason: 'ErrImagePull', message: err.message } };
    ctx.refreshConditions();
    ctx.writeStatus();
    ctx.event('Normal', 'Pulling', `Pulling image "${image}"`, c);
    ctx.event('Warning', 'Failed', err.message, c);
    ctx.event('Warning', 'Failed', 'Error: ErrImagePull', c);
    const b = backoffOf(ctx);
    const wait = Math.min(b.initialSeconds * 2 ** (pull.failures - 1), b.maxSeconds) * 1000;
    await sleep(Math.min(300, wait), signal);
    if (signal.aborted) return undefined;
    c.state = {
      waiting: { reason: 'ImagePullBackOff', message: `Back-off pulling image "${image}": ${err.message}` },
    };
    ctx.writeStatus();
    ctx.event('Normal', 'BackOff', `Back-off pulling image "${image}"`, c);
    ctx.event('Warning', 'Failed', 'Error: ImagePullBackOff', c);
    await sleep(wait, signal);
    return undefined;
  }
}

/**
 * Environment, working directory and the runtime hook's config of the container; its argv. Undefined after a
 * CreateContainerConfigError and a pause (the caller tries again).
 */
async function prepare(ctx: PodContext, c: ContainerState, entry: ImageEntry): Promise<string[] | undefined> {
  const host = ctx.host;
  let env: Record<string, string>;
  try {
    env = await containerEnv(
      host.opts.client,
      c.spec,
      { pod: ctx.pod, podIP: ctx.ip, hostIP: host.hostIP, nodeName: host.opts.nodeName },
      { ...host.serviceEnv(ctx.pod), ...(entry.env ?? {}) },
    );
  } catch (err) {
    const msg = err instanceof EnvError ? err.message : (err as Error).message;
    c.state = { waiting: { reason: 'CreateContainerConfigError', message: msg } };
    ctx.writeStatus();
    ctx.event('Warning', 'Failed', `Error: ${msg}`, c);
    await sleep(2000, ctx.signal);
    return undefined;
  }
  const mounts = containerMounts(ctx.pod, c.spec, ctx.volumeDirs);
  const mapPath = pathMapper(mounts);
  c.cwd = c.spec.workingDir ? (mapPath(c.spec.workingDir) as string) : entry.workingDir;
  c.env = env;
  c.runtimeConfig = join(ctx.dir, `runtime-${c.spec.name}.json`);
  writeFileSync(c.runtimeConfig, JSON.stringify(podRuntimeConfig(ctx, mounts), null, 2));
  return containerArgv(entry, c.spec, env);
}

/** Starts the container's process; once it runs (not a StartError), its probes. */
async function start(
  ctx: PodContext,
  c: ContainerState,
  argv: string[],
): Promise<{ proc: ContainerProcess; runStart: number }> {
  const proc = ctx.host.opts.runner.start({
    namespace: ctx.pod.metadata.namespace,
    pod: ctx.pod.metadata.name,
    container: c.spec.name,
    argv,
    env: c.env!,
    workingDir: c.cwd,
    logFile: newInstanceLog(c.logDir, c.restartCount),
    runtimeConfig: c.runtimeConfig,
  });
  c.proc = proc;
  c.containerID = `gwlab://${ctx.uid.slice(0, 8)}-${c.spec.name}-${c.restartCount}`;
  ctx.event('Normal', 'Created', `Created container ${c.spec.name}`, c);
  const runStart = Date.now();
  // A start error resolves at once; otherwise the process runs.
  const early = await Promise.race([proc.exited, new Promise<undefined>((r) => setImmediate(() => r(undefined)))]);
  if (early?.reason !== 'StartError') {
    ctx.event('Normal', 'Started', `Started container ${c.spec.name}`, c);
    c.state = { running: { startedAt: rfc3339(proc.startedAt) } };
    c.started = !c.spec.startupProbe;
    c.startupDone = !c.spec.startupProbe;
    c.readiness = undefined;
    startProbes(ctx, c);
  }
  ctx.refreshConditions();
  ctx.writeStatus();
  return { proc, runStart };
}

/** After an exit: terminated for good (false), or restarted (true) after the CrashLoopBackOff back-off. */
async function afterExit(
  ctx: PodContext,
  c: ContainerState,
  exit: ContainerExit,
  runStart: number,
  policy: string,
): Promise<boolean> {
  const signal = ctx.signal;
  stopProbes(c);
  for (const e of c.execs) void e.stop(0);
  if (exit.reason === 'StartError') ctx.event('Warning', 'Failed', `Error: ${exit.message}`, c);
  const terminated = terminatedState(exit, c);
  c.ready = false;
  c.started = false;
  c.proc = undefined;
  const ranMs = Date.now() - runStart;
  if (ranMs > backoffOf(ctx).maxSeconds * 2000) c.crashes = 0;
  const restart =
    !signal.aborted &&
    (policy === 'Always' ? !c.init || exit.exitCode !== 0 : policy === 'OnFailure' ? exit.exitCode !== 0 : false);
  if (!restart) {
    c.state = { terminated };
    c.done = true;
    ctx.refreshConditions();
    ctx.writeStatus();
    return false;
  }
  c.crashes++;
  c.lastState = { terminated };
  const wait = backoffMs(ctx, c);
  if (wait > 0) {
    const pod = ctx.pod;
    c.state = {
      waiting: {
        reason: 'CrashLoopBackOff',
        message: `back-off ${goDuration(wait)} restarting failed container=${c.spec.name} pod=${pod.metadata.name}_${pod.metadata.namespace}(${ctx.uid})`,
      },
    };
    ctx.refreshConditions();
    ctx.writeStatus();
    ctx.event(
      'Warning',
      'BackOff',
      `Back-off restarting failed container ${c.spec.name} in pod ${pod.metadata.name}_${pod.metadata.namespace}(${ctx.uid})`,
      c,
    );
    await sleep(wait, signal);
  }
  if (signal.aborted) {
    c.state = { terminated };
    return false;
  }
  return true;
}

/** The first restart is immediate, then `initialSeconds` doubling up to `maxSeconds`. */
function backoffMs(ctx: PodContext, c: ContainerState): number {
  const b = backoffOf(ctx);
  if (c.crashes <= 1) return 0;
  return Math.min(b.initialSeconds * 2 ** (c.crashes - 2), b.maxSeconds) * 1000;
}

function terminatedState(exit: ContainerExit, c: ContainerState): any {
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

/** The pod runtime hook's config for a container (runtime-hook/runtime-config.ts): identity, DNS, mounts, ports. */
function podRuntimeConfig(ctx: PodContext, mounts: PodRuntimeConfig['mounts']): PodRuntimeConfig {
  const o = ctx.host.opts;
  const pod = ctx.pod;
  const domain = o.clusterDomain ?? 'cluster.local';
  return {
    version: 1,
    lab: o.lab,
    pod: {
      namespace: pod.metadata.namespace,
      name: pod.metadata.name,
      uid: ctx.uid,
      ip: ctx.ip,
      loopback: ctx.host.podLoopback(ctx.ip),
    },
    hostname: pod.spec.hostname ?? pod.metadata.name,
    dns: {
      server: o.dns.address,
      port: o.dns.port,
      search: podSearchPath(pod.metadata.namespace, domain),
      ndots: 5,
      clusterDomain: domain,
    },
    mounts,
    portShift: o.portShift ? { ...o.portShift, octets: ctx.host.shiftedOctets } : null,
    labOctets: [o.plan.podOctet, o.plan.serviceOctet, o.plan.lbOctet],
    watchdog: o.runner.watchdogTarget(),
  };
}
