// The conformance project's lab and suite setup, once per run: a throw-away embedded lab brought up by the same code
// as `npm run lab:up` (no sample applications: the suite brings its own backends), or the cluster of
// GWLAB_CONFORMANCE_KUBECONFIG (+ GWLAB_CONFORMANCE_CONTEXT) that already runs the system; then upstream's Setup
// (conformance/utils/suite.ts): GatewayClass, base manifests, generated certificates, namespaces ready. The tests get
// the cluster and the controller name by `inject('conformance')`. Teardown deletes what the setup created and stops
// the lab it started. GWLAB_CONFORMANCE_SETUP_LOG names a file for the setup's lines (default: stderr).
// GWLAB_CONFORMANCE_CHANNEL (standard|experimental, default experimental) is the Gateway API channel the throw-away lab
// installs: extended features such as HTTPRoute `retry` exist only in the experimental CRDs, and upstream's reports
// name the channel they ran on. On an existing cluster the channel is read from its HTTPRoute CRD's annotation. Either
// way it is left in GWLAB_CONFORMANCE_CHANNEL for the reporter (this same process).
import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { labDown, labUp } from '../../lab/lifecycle.ts';
import { Progress } from '../../lab/progress.ts';
import { addressPlan } from '../../lab/state.ts';
import { Kube } from '../../lab/toolkit/kube.ts';
import { GATEWAY_API_CHANNELS, type GatewayApiChannel } from '../../system/manifests/gateway-api-channels.ts';
import { DEFAULT_TIMEOUT_CONFIG } from '../utils/config.ts';
import { DEFAULT_GATEWAY_CLASS, setupSuite } from '../utils/suite.ts';

export interface ProvidedConformance {
  kubeconfig: string;
  context: string;
  gatewayClassName: string;
  controllerName: string;
  /** Where the suite ran: embedded (a throw-away lab) or existing. */
  backend: string;
  /** Upstream's UsableNetworkAddresses / UnusableNetworkAddresses (GatewayStaticAddresses). */
  usableAddresses: { type?: string; value: string }[];
  unusableAddresses: { type?: string; value: string }[];
}

/**
 * The address pools of GatewayStaticAddresses: on the throw-away lab, an address of its LoadBalancer range (usable)
 * and one of TEST-NET-1 (RFC 5737: never the lab's, so unusable); on an existing cluster,
 * GWLAB_CONFORMANCE_USABLE_ADDRESS / GWLAB_CONFORMANCE_UNUSABLE_ADDRESS (upstream's --usable-address and
 * --unusable-address), none when unset.
 */
function addressPools(lbOctet: number | undefined): Pick<ProvidedConformance, 'usableAddresses' | 'unusableAddresses'> {
  const pool = (v: string | undefined) => (v ? [{ type: 'IPAddress', value: v }] : []);
  if (lbOctet !== undefined)
    return { usableAddresses: pool(`127.${lbOctet}.250.250`), unusableAddresses: pool('192.0.2.1') };
  return {
    usableAddresses: pool(process.env.GWLAB_CONFORMANCE_USABLE_ADDRESS),
    unusableAddresses: pool(process.env.GWLAB_CONFORMANCE_UNUSABLE_ADDRESS),
  };
}

declare module 'vitest' {
  export interface ProvidedContext {
    conformance: ProvidedConformance;
  }
}

export default async function setup(project: TestProject) {
  const log = (l: string) => {
    const file = process.env.GWLAB_CONFORMANCE_SETUP_LOG;
    if (file) appendFileSync(file, `${new Date().toISOString()} ${l}\n`);
    else process.stderr.write(`${l}\n`);
  };
  const gatewayClassName = process.env.GWLAB_CONFORMANCE_GATEWAY_CLASS || DEFAULT_GATEWAY_CLASS;
  let kubeconfig = process.env.GWLAB_CONFORMANCE_KUBECONFIG ?? '';
  let context = process.env.GWLAB_CONFORMANCE_CONTEXT ?? '';
  let down: (() => Promise<void>) | undefined;
  let lbOctet: number | undefined;
  if (!kubeconfig) {
    const home = mkdtempSync(join(tmpdir(), 'gwlab-conformance-'));
    const name = `conf-${process.pid}`;
    const t0 = performance.now();
    const channel = (process.env.GWLAB_CONFORMANCE_CHANNEL || 'experimental') as GatewayApiChannel;
    if (!GATEWAY_API_CHANNELS.includes(channel))
      throw new Error(`GWLAB_CONFORMANCE_CHANNEL=${channel}: use ${GATEWAY_API_CHANNELS.join(' or ')}`);
    process.env.GWLAB_CONFORMANCE_CHANNEL = channel;
    const up = await labUp({
      name,
      home,
      backend: 'embedded',
      gatewayApiChannel: channel,
      progress: new Progress({ sink: { write: log } }),
    });
    log(`lab ${name} up in ${Math.round(performance.now() - t0)} ms (GWLAB_HOME=${home})`);
    kubeconfig = up.kubeconfig;
    lbOctet = addressPlan(up.record.index).lbOctet;
    context = up.context;
    down = async () => {
      await labDown({ name, home, progress: new Progress({ quiet: true }) }).catch(() => {});
      rmSync(home, { recursive: true, force: true });
    };
  }
  const kube = Kube.fromFile(kubeconfig, context || undefined);
  try {
    if (!down) {
      const crd = await kube.get(
        'apiextensions.k8s.io/v1',
        'CustomResourceDefinition',
        'httproutes.gateway.networking.k8s.io',
      );
      const installed = crd?.metadata?.annotations?.['gateway.networking.k8s.io/channel'];
      if (installed) process.env.GWLAB_CONFORMANCE_CHANNEL = installed;
    }
    const t0 = performance.now();
    const { controllerName, created } = await setupSuite(kube, DEFAULT_TIMEOUT_CONFIG, gatewayClassName, log);
    log(`suite setup done in ${Math.round(performance.now() - t0)} ms`);
    project.provide('conformance', {
      kubeconfig,
      context,
      gatewayClassName,
      controllerName,
      backend: down ? 'embedded' : 'existing',
      ...addressPools(lbOctet),
    });
    return async () => {
      if (!down) await kube.delete(created).catch(() => {});
      await down?.();
    };
  } catch (err) {
    await down?.();
    throw err;
  }
}
