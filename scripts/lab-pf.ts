// npm run lab:pf -- controlplane | proxy <gateway> | gateway <gateway> [-n <namespace>] [--port <local>]
// Forwards the control plane admin (9095), a Gateway's proxy admin (19000) or its traffic port (local 8080) through
// the Kubernetes API, as the contract's `kubectl port-forward` commands do, on any backend. Runs until Ctrl-C.
import { CONTROL_PLANE, controlPlaneSelector, GATEWAY_NAME_LABEL, PROXY_ADMIN_PORT } from '../lab/toolkit/admin.ts';
import type { Kube } from '../lab/toolkit/kube.ts';
import { portForward } from '../lab/toolkit/portforward.ts';
import { CLUSTER_USAGE, openLab, parseFlags, run } from './cli.ts';

const USAGE = `usage: npm run lab:pf -- <target> [-n <namespace>] [--port <local port>] [--kubeconfig <f> | --name <lab>] [--context <c>]
targets:
  controlplane         localhost:9095  -> gwvendor-system/deploy/gwvendor 9095 (admin: /, /debug/pprof, /logging, /snapshots/krt, /snapshots/xds)
  proxy <gateway>      localhost:19000 -> the Gateway's proxy pod 19000 (config_dump, listeners, logging, stats/prometheus)
  gateway <gateway>    localhost:8080  -> the Gateway's proxy pod, first listener port (send traffic with a Host header)
${CLUSTER_USAGE}`;

/** The namespace of a Gateway given by name only: the one namespace that has it, or an error listing them. */
async function gatewayNamespace(
  kube: Kube,
  name: string,
  ns?: string,
): Promise<{ namespace: string; ports: number[] }> {
  const all = (await kube.list('gateway.networking.k8s.io/v1', 'Gateway', ns)).filter((g) => g.metadata?.name === name);
  if (all.length === 0) {
    throw new Error(`no Gateway ${name}${ns ? ` in namespace ${ns}` : ''}; list them with: kubectl get gateways -A`);
  }
  if (all.length > 1) {
    const where = all.map((g) => g.metadata?.namespace).join(', ');
    throw new Error(`Gateway ${name} exists in several namespaces (${where}); pick one with -n <namespace>`);
  }
  const g = all[0];
  return {
    namespace: g.metadata!.namespace!,
    ports: (g.spec?.listeners ?? []).map((l: { port: number }) => l.port),
  };
}

await run(async () => {
  const flags = parseFlags({ string: ['namespace', 'port'], alias: { n: 'namespace' } });
  const [target, gateway] = flags.args._ as string[];
  if (flags.args.help || !target) {
    console.log(USAGE);
    if (!target && !flags.args.help) process.exitCode = 2;
    return;
  }
  const { kube } = openLab(flags);
  const ns = flags.args.namespace as string | undefined;
  let spec: { namespace: string; labelSelector: string; port: number; localPort: number; what: string };
  if (target === 'controlplane') {
    spec = {
      namespace: CONTROL_PLANE.namespace,
      labelSelector: await controlPlaneSelector(kube),
      port: CONTROL_PLANE.adminPort,
      localPort: CONTROL_PLANE.adminPort,
      what: 'control plane admin',
    };
  } else if (target === 'proxy' || target === 'gateway') {
    if (!gateway) throw new Error(`lab:pf ${target} needs a Gateway name\n${USAGE}`);
    const g = await gatewayNamespace(kube, gateway, ns);
    const port = target === 'proxy' ? PROXY_ADMIN_PORT : g.ports[0];
    if (port === undefined) throw new Error(`Gateway ${g.namespace}/${gateway} has no listener`);
    spec = {
      namespace: g.namespace,
      labelSelector: `${GATEWAY_NAME_LABEL}=${gateway}`,
      port,
      localPort: target === 'proxy' ? PROXY_ADMIN_PORT : 8080,
      what:
        target === 'proxy' ? `proxy admin of ${g.namespace}/${gateway}` : `traffic port of ${g.namespace}/${gateway}`,
    };
  } else {
    throw new Error(`unknown target ${target}\n${USAGE}`);
  }
  if (flags.args.port !== undefined) spec.localPort = Number(flags.args.port);
  const fwd = await portForward(kube.kc, spec).catch((err: Error & { code?: string }) => {
    if (err.code === 'EADDRINUSE') {
      throw new Error(`local port ${spec.localPort} is in use (another port-forward?); pick another with --port <n>`);
    }
    throw err;
  });
  console.log(
    `Forwarding from 127.0.0.1:${fwd.localPort} -> ${spec.port} (${spec.what}, pod ${spec.namespace}/${fwd.pod})`,
  );
  if (target === 'gateway') console.log(`Try: curl -H 'Host: <a hostname of your HTTPRoute>' ${fwd.url}/headers`);
  else console.log(`Open: ${fwd.url}/`);
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  await fwd.close();
});
