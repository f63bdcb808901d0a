// npm run lab:up [-- --cluster embedded|kind|k3s|existing] [--name <lab>] [--with-sampleapp] [--with-extauth]
//   [--validation strict|off] [--merge-kubeconfig] [--kubeconfig <file> --context <ctx>] [--force-lb-fallback]
//   [--sa-token-max-expiration <s>] [--gateway-api-channel standard|experimental]
// Its own modules are few (flags.ts, not cli.ts): on the embedded backend the lab process is started first, and the
// Kubernetes client and the install step load meanwhile (lab/lifecycle.ts). All of them load through Node's compile
// cache (lab/compile-cache.ts): it is turned on before they are imported, hence the dynamic imports.
import module from 'node:module';
import type { Backend } from '../lab/lifecycle.ts';
import type { UpHintInput } from './hints.ts';

module.enableCompileCache();
const { parseTokenExpiration, SA_TOKEN_MAX_EXPIRATION_ENV } = await import('../lab/embedded/process.ts');
const { BACKENDS, labUp } = await import('../lab/lifecycle.ts');
const { formatMs, Progress } = await import('../lab/progress.ts');
const { parseFlags, run } = await import('./flags.ts');
const { upFailureHint, upSummary } = await import('./hints.ts');
const { GATEWAY_API_CHANNELS } = await import('../system/manifests/gateway-api-channels.ts');

const USAGE = `usage: npm run lab:up -- [options]
  --cluster <backend>    embedded (default: no container engine needed), kind, k3s, existing
  --name <lab>           lab name (default gwlab); several labs can run side by side
  --with-sampleapp       also install the sample application (namespace sampleapp)
  --with-extauth         also install the ext-auth, rate-limit and ext-proc samples (namespaces extauth, ratelimit,
                         extproc)
  --validation <mode>    control plane xDS validation: strict (default) or off
  --merge-kubeconfig     merge the lab's context into ~/.kube/config (as kind does)
  --kubeconfig <file>    existing backend: the kubeconfig (default $KUBECONFIG or ~/.kube/config)
  --context <name>       existing backend: the context (default: the current one)
  --force-lb-fallback    embedded: serve LoadBalancer port p on p+8000, as when p cannot be bound
  --sa-token-max-expiration <s>
                         embedded: pod service-account tokens live at most <s> seconds (kube-apiserver's
                         --service-account-max-token-expiration; default: as requested, 1 h), so renewals can be
                         watched in seconds; also GWLAB_SA_TOKEN_MAX_EXPIRATION
  --gateway-api-channel <channel>
                         the vendored Gateway API bundle installed on a cluster that has none: standard
                         (default, what users install) or experimental (adds the x-k8s.io kinds and the
                         experimental fields); a cluster's own Gateway API CRDs are kept, never downgraded
  --no-install           bring up the cluster only`;

/**
 * --sa-token-max-expiration, or GWLAB_SA_TOKEN_MAX_EXPIRATION (which the lab process would read anyway): the seconds,
 * or exit 2 naming the flag and the reason.
 */
function tokenExpirationFlag(flag: string | undefined, backend: Backend): number | undefined {
  const env = SA_TOKEN_MAX_EXPIRATION_ENV;
  const text = flag ?? (backend === 'embedded' ? process.env[env] || undefined : undefined);
  if (text === undefined) return undefined;
  try {
    if (backend !== 'embedded') throw new Error(`applies to the embedded cluster only, not --cluster ${backend}`);
    return parseTokenExpiration(text);
  } catch (err) {
    console.error(`--sa-token-max-expiration (or ${env}): ${(err as Error).message}`);
    process.exit(2);
  }
}

await run(async () => {
  const { name, nameGiven, home, homeGiven, args } = parseFlags({
    boolean: ['with-sampleapp', 'with-extauth', 'merge-kubeconfig', 'force-lb-fallback', 'no-install'],
    string: ['cluster', 'validation', 'kubeconfig', 'context', 'sa-token-max-expiration', 'gateway-api-channel'],
  });
  if (args.help) {
    console.log(USAGE);
    return;
  }
  const backend = (args.cluster ?? 'embedded') as Backend;
  if (!BACKENDS.includes(backend)) throw new Error(`--cluster ${backend}: use one of ${BACKENDS.join(', ')}`);
  const saTokenMaxExpirationSeconds = tokenExpirationFlag(args['sa-token-max-expiration'], backend);
  const validation = args.validation as 'strict' | 'off' | undefined;
  if (validation && validation !== 'strict' && validation !== 'off')
    throw new Error(`--validation ${validation}: use strict or off`);
  const channel = (args['gateway-api-channel'] ?? 'standard') as (typeof GATEWAY_API_CHANNELS)[number];
  if (!GATEWAY_API_CHANNELS.includes(channel))
    throw new Error(`--gateway-api-channel ${channel}: use ${GATEWAY_API_CHANNELS.join(' or ')}`);
  const hints: UpHintInput = {
    name,
    nameGiven,
    home,
    homeGiven,
    argv: process.argv.slice(2),
    kubeconfigFlag: args.kubeconfig,
    contextFlag: args.context,
    envKubeconfig: process.env.KUBECONFIG || undefined,
  };
  const progress = new Progress({ hint: upFailureHint(hints) });
  console.error(`gwlab: bringing up lab ${name} (${backend}) under ${home}`);
  const up = await labUp({
    name,
    home,
    backend,
    progress,
    withSampleApp: args['with-sampleapp'],
    withExtAuth: args['with-extauth'],
    validation,
    gatewayApiChannel: channel,
    mergeKubeconfig: args['merge-kubeconfig'],
    kubeconfig: args.kubeconfig,
    context: args.context,
    forceLbPortFallback: args['force-lb-fallback'],
    saTokenMaxExpirationSeconds,
    noInstall: args.install === false || args['no-install'],
  });
  console.log(
    upSummary(hints, {
      backend,
      reused: up.reused,
      elapsed: formatMs(progress.totalMs()),
      kubeconfig: up.kubeconfig,
      context: up.context,
      merged: !!args['merge-kubeconfig'],
    }),
  );
});
