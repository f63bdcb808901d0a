// A container's probes wired to its pod (pkg/kubelet/prober/prober_manager.go): the startup probe first, then
// liveness and readiness; a failed startup or liveness probe kills the container (the container loop restarts it per
// restartPolicy), readiness drives the container's `ready` and so the pod's Ready condition. probes.ts runs each
// probe on its schedule; this decides what a result means.
import { type ProbeKind, type ProbeTarget, ProbeWorker } from './probes.ts';
import type { ContainerState, PodContext } from './types.ts';

const LABEL = { startup: 'Startup', liveness: 'Liveness', readiness: 'Readiness' } as const;

function probeTarget(ctx: PodContext, c: ContainerState): ProbeTarget {
  const ip = ctx.ip;
  return {
    podIP: ip,
    namedPort: (name) => (c.spec.ports ?? []).find((p: any) => p.name === name)?.containerPort,
    effectivePort: (port) => ctx.host.effectivePort(ip, port),
    exec: (command, timeoutMs) => ctx.exec(c.spec.name, command, timeoutMs),
  };
}

/** Starts a (re)started container's probes: the startup probe if it has one, else liveness and readiness. */
export function startProbes(ctx: PodContext, c: ContainerState): void {
  const t = probeTarget(ctx, c);
  const mk = (kind: ProbeKind, probe: any) =>
    new ProbeWorker(
      kind,
      probe,
      t,
      (ok) => onProbe(ctx, c, kind, ok),
      (message) => ctx.event('Warning', 'Unhealthy', `${LABEL[kind]} probe failed: ${message}`, c),
    );
  c.probes = [];
  if (c.spec.startupProbe) c.probes.push(mk('startup', c.spec.startupProbe));
  else startSteadyProbes(c, mk);
  for (const p of c.probes) p.start();
  if (!c.spec.readinessProbe && c.startupDone) c.ready = true;
  c.probeFactory = mk;
}

function startSteadyProbes(c: ContainerState, mk: (kind: 'liveness' | 'readiness', probe: any) => ProbeWorker) {
  const started: ProbeWorker[] = [];
  if (c.spec.livenessProbe) started.push(mk('liveness', c.spec.livenessProbe));
  if (c.spec.readinessProbe) started.push(mk('readiness', c.spec.readinessProbe));
  c.probes.push(...started);
  return started;
}

export function stopProbes(c: ContainerState): void {
  for (const p of c.probes) p.stop();
  c.probes = [];
}

/** A probe's result flipped (after its thresholds). */
function onProbe(ctx: PodContext, c: ContainerState, kind: ProbeKind, ok: boolean): void {
  if (!c.proc?.running) return;
  const grace = ctx.pod.spec.terminationGracePeriodSeconds ?? 30;
  if (kind === 'startup') {
    if (ok) {
      c.startupDone = true;
      c.started = true;
      for (const p of startSteadyProbes(c, c.probeFactory!)) p.start();
      if (!c.spec.readinessProbe) c.ready = true;
    } else {
      ctx.event('Normal', 'Killing', `Container ${c.spec.name} failed startup probe, will be restarted`, c);
      void c.proc.stop(grace);
    }
  } else if (kind === 'liveness') {
    if (!ok) {
      ctx.event('Normal', 'Killing', `Container ${c.spec.name} failed liveness probe, will be restarted`, c);
      void c.proc.stop(grace);
    }
  } else {
    c.readiness = ok;
    c.ready = ok && c.startupDone;
  }
  ctx.refreshConditions();
  ctx.writeStatus();
}
