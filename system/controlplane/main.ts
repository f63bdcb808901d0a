// `main.ts controlplane [flags]`: the gwvendor control plane. In a pod it reads the cluster through the in-cluster
// configuration (KubeConfig.loadFromDefault, its token re-read when renewed), serves xDS on 9977 and the admin server
// on 127.0.0.1:9095; with --health-port and --metrics-port (the install manifest: 9093, 9092) probes and Prometheus
// reach it on the pod IP.
import { parseArgs } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import pkg from '../../package.json' with { type: 'json' };
import { LogRegistry, parseLevel } from '../shared/log.ts';
import { ControlPlane } from './controlplane.ts';
import type { ValidationMode } from './ir/types.ts';
import { reloadTokenFileOnChange } from './kube/token-file.ts';

const USAGE = `usage: main.ts controlplane [flags]
  --xds-port <port>          xDS (ADS, gRPC) port, default 9977
  --xds-address <addr>       xDS bind address, default 0.0.0.0
  --admin-port <port>        admin server port, default 9095 (bound to --admin-address)
  --admin-address <addr>     default 127.0.0.1: reach it with kubectl port-forward
  --health-port <port>       /healthz and /readyz for probes (0.0.0.0), default none
  --metrics-port <port>      /metrics for Prometheus (0.0.0.0; the admin's /metrics only), default none
  --log-level <level>        trace, debug, info, warn, error (default info); /logging changes it at run time
  --kubeconfig <path>        default: in-cluster configuration, then $KUBECONFIG, then ~/.kube/config
environment:
  GWVENDOR_XDS_VALIDATION    strict (default) or off: whether invalid config is caught here or sent to the proxies
  GWVENDOR_PROXY_IMAGE       image of the proxies it deploys (default gwlab.local/system:${pkg.version})
  GWVENDOR_XDS_HOST          where proxies reach xDS (default gwvendor.<POD_NAMESPACE>.svc.cluster.local)
  POD_NAMESPACE, POD_NAME    the control plane's own namespace and pod (downward API)`;

function port(name: string, v: string | undefined, dflt: number | undefined): number | undefined {
  if (v === undefined) return dflt;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new Error(`--${name}: ${v} is not a port number (0-65535)`);
  return n;
}

export async function main(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      'xds-port': { type: 'string' },
      'xds-address': { type: 'string' },
      'admin-port': { type: 'string' },
      'admin-address': { type: 'string' },
      'health-port': { type: 'string' },
      'metrics-port': { type: 'string' },
      'log-level': { type: 'string' },
      kubeconfig: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(USAGE + '\n');
    return;
  }
  const level = parseLevel(values['log-level'] ?? 'info');
  if (!level) throw new Error(`--log-level: ${values['log-level']} is not a level (trace, debug, info, warn, error)`);
  const validationRaw = (process.env.GWVENDOR_XDS_VALIDATION ?? 'strict').trim().toLowerCase();
  if (validationRaw !== 'strict' && validationRaw !== 'off') {
    throw new Error(`GWVENDOR_XDS_VALIDATION=${process.env.GWVENDOR_XDS_VALIDATION}: use strict or off`);
  }
  const validation = validationRaw as ValidationMode;
  const namespace = process.env.POD_NAMESPACE ?? 'gwvendor-system';
  const xdsPort = port('xds-port', values['xds-port'], 9977)!;

  const kc = new KubeConfig();
  if (values.kubeconfig) kc.loadFromFile(values.kubeconfig);
  else kc.loadFromDefault();
  // In a pod: the service-account token is read again as soon as the kubelet renews it (kube/token-file.ts).
  reloadTokenFileOnChange(kc);

  const logs = new LogRegistry({ level });
  const cp = new ControlPlane({
    validation,
    logs,
    kubeConfig: kc,
    xdsHost: values['xds-address'] ?? '0.0.0.0',
    xdsPort,
    adminHost: values['admin-address'] ?? '127.0.0.1',
    adminPort: port('admin-port', values['admin-port'], 9095),
    healthPort: port('health-port', values['health-port'], undefined),
    metricsPort: port('metrics-port', values['metrics-port'], undefined),
    deployer: {
      proxyImage: process.env.GWVENDOR_PROXY_IMAGE ?? `gwlab.local/system:${pkg.version}`,
      xdsHost: process.env.GWVENDOR_XDS_HOST ?? `gwvendor.${namespace}.svc.cluster.local`,
      xdsPort,
    },
    instance: process.env.POD_NAME,
    version: pkg.version,
  });
  cp.log.info('starting', {
    version: pkg.version,
    validation,
    apiServer: kc.getCurrentCluster()?.server,
    proxyImage: process.env.GWVENDOR_PROXY_IMAGE,
  });
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    cp.log.info('shutting down', { signal });
    cp.stop()
      .catch((err) => cp.log.error('shutdown failed', { err: err as Error }))
      .finally(() => process.exit(0));
    setTimeout(() => process.exit(1), 10_000).unref();
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  await cp.start();
}
