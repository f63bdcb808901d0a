// npm run lab:up [-- --cluster embedded|kind|k3s|existing] [--name <lab>] [--with-sampleapp] [--with-extauth]
//   [--validation strict|off] [--merge-kubeconfig] [--kubeconfig <file> --context <ctx>] [--force-lb-fallback]
//   [--sa-token-max-expiration <s>]
import { parseTokenExpiration, SA_TOKEN_MAX_EXPIRATION_ENV } from '../lab/embedded/process.ts';
import { BACKENDS, type Backend, labUp } from '../lab/lifecycle.ts';
import { formatMs, Progress } from '../lab/progress.ts';
import { parseFlags, run } from './cli.ts';

const USAGE = `usage: npm run lab:up -- [options]
  --cluster <backend>    embedded (default: no container engine needed), kind, k3s, existing
  --name <lab>           lab name (default gwlab); several labs can run side by side
  --with-sampleapp       also install the sample application (namespace sampleapp)
  --with-extauth         also install the ext-auth sample (namespace extauth)
  --validation <mode>    control plane xDS validation: strict (default) or off
  --merge-kubeconfig     merge the lab's context into ~/.kube/config (as kind does)
  --kubeconfig <file>    existing backend: the kubeconfig (default $KUBECONFIG or ~/.kube/config)
  --context <name>       existing backend: the context (default: the current one)
  --force-lb-fallback    embedded: serve LoadBalancer port p on p+8000, as when p cannot be bound
  --sa-token-max-expiration <s>
                         embedded: pod service-account tokens live at most <s> seconds (kube-apiserver's
                         --service-account-max-token-expiration; default: as requested, 1 h), so renewals can be
                         watched in seconds; also GWLAB_SA_TOKEN_MAX_EXPIRATION
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
  const { name, home, args } = parseFlags({
    boolean: ['with-sampleapp', 'with-extauth', 'merge-kubeconfig', 'force-lb-fallback', 'no-install'],
    string: ['cluster', 'validation', 'kubeconfig', 'context', 'sa-token-max-expiration'],
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
  const down = `npm run lab:down${name !== 'gwlab' ? ` -- --name ${name}` : ''}`;
  const progress = new Progress({
    hint: `npm run lab:status${name !== 'gwlab' ? ` -- --name ${name}` : ''} to see what is there; ${down} and npm run lab:up again to start afresh`,
  });
  console.error(`gwlab: bringing up lab ${name} (${backend}) under ${home}`);
  const up = await labUp({
    name,
    home,
    backend,
    progress,
    withSampleApp: args['with-sampleapp'],
    withExtAuth: args['with-extauth'],
    validation,
    mergeKubeconfig: args['merge-kubeconfig'],
    kubeconfig: args.kubeconfig,
    context: args.context,
    forceLbPortFallback: args['force-lb-fallback'],
    saTokenMaxExpirationSeconds,
    noInstall: args.install === false || args['no-install'],
  });
  const ns = 'gwvendor-system';
  console.log(`
Lab ${name} is up (${backend}${up.reused ? ', reused' : ''}) in ${formatMs(progress.totalMs())}.

  export KUBECONFIG=${up.kubeconfig}${args['merge-kubeconfig'] ? `   # or: kubectl config use-context ${up.context}` : ''}
  kubectl get pods -n ${ns}

Debug interfaces (contract 4.1-4.3), by port-forward:
  kubectl -n ${ns} port-forward deploy/gwvendor 9095            # control plane admin: http://localhost:9095/
  kubectl -n ${ns} port-forward deploy/<gateway_name> 19000     # proxy admin: http://localhost:19000/config_dump
  kubectl -n ${ns} port-forward deploy/<gateway_name> 8080:80   # gateway traffic on localhost:8080
  (or: npm run lab:pf -- controlplane | proxy <gateway_name> | gateway <gateway_name>)

Traffic through a gateway (contract 4.4), once a Gateway and an HTTPRoute exist:
  IP=$(kubectl -n ${ns} get svc <gateway_name> -o jsonpath='{.status.loadBalancer.ingress[0].ip}')
  PORT=$(kubectl -n ${ns} get svc <gateway_name> -o jsonpath='{.metadata.annotations.gwlab\\.dev/lb-port-80}')
  curl -H 'Host: www.example.com' http://$IP:\${PORT:-80}/headers   # PORT: set when the lab could not bind 80

Status: npm run lab:status    Stop: npm run lab:down${name !== 'gwlab' ? ` -- --name ${name}` : ''}`);
});
