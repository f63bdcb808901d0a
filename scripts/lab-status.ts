// npm run lab:status -- [-A | -n <namespace>] [-v] [-o json] [--kubeconfig <f> | --name <lab>] [--context <c>]
// Read-only. The logic is lab/tools/status.ts (data) and lab/tools/status-render.ts (text).

import { collectStatus } from '../lab/tools/status.ts';
import { renderStatus } from '../lab/tools/status-render.ts';
import { CLUSTER_USAGE, openLab, parseFlags, run, usageError } from './cli.ts';

const USAGE = `usage: npm run lab:status -- [-A | -n <namespace>] [-v] [-o json] [--kubeconfig <f> | --name <lab>] [--context <c>]

Shows, without changing anything in the cluster:
  Cluster        API server, context, version, nodes (and the lab's backend and process when started by lab:up)
  Control plane  deployment gwvendor-system/gwvendor ready x/y, its pods, the validation mode (GWVENDOR_XDS_VALIDATION)
  Gateways       class, address, listeners, proxy pods ready
  Conditions     one row per condition of GatewayClasses, Gateways (listeners too when not ok, or with -v),
                 HTTPRoutes (per parent Gateway), TrafficPolicies (per ancestor Gateway; the top-level ones only
                 where no ancestor has the type, e.g. Attached=False/TargetNotFound) and
                 GatewayExtensions; GEN is observedGeneration/generation (STALE when the status is behind)
  Proxies        each connected proxy's xDS types from the control plane's /snapshots/xds: version sent and acked,
                 ACKED/NACKED, the last NACK

  -A               all namespaces (the default)
  -n <namespace>   one namespace; GatewayClasses shown are those its Gateways use, proxies those of its Gateways
  -v               messages of every condition, listener conditions that are ok, full NACK details
  -o json          the same data, structured (problems and warnings included)

${CLUSTER_USAGE}

Exit code: 1 when something is wrong — a condition Accepted, Programmed or ResolvedRefs is False; a proxy NACKed a
type; the control plane is missing, not ready or its admin server cannot be reached; a node is not Ready; a section
could not be read. Marked ✗ in the tables. Warnings (!) do not change the exit code: other conditions in their bad
state, statuses behind their object's generation, objects no controller has written a status for, proxy pods not
ready, Gateways without a connected proxy, xDS sent but not yet acknowledged. 0 otherwise; 2 on a usage error.`;

await run(async () => {
  const flags = parseFlags({
    boolean: ['A', 'all-namespaces', 'v', 'verbose'],
    string: ['namespace', 'output'],
    alias: { n: 'namespace', o: 'output' },
  });
  const a = flags.args;
  if (a.help) {
    console.log(USAGE);
    return;
  }
  const usage = (why: string) => usageError(USAGE, why);
  const all = a.A || a['all-namespaces'];
  if (Array.isArray(a.namespace)) usage('give one -n <namespace> (or -A for all)');
  const ns = a.namespace as string | undefined;
  if (all && ns) usage('give -A or -n <namespace>, not both');
  if (a.namespace !== undefined && !ns) usage('-n needs a namespace');
  const output = (a.output as string | undefined) ?? 'text';
  if (output !== 'text' && output !== 'json') usage(`-o ${output}: use json (or leave it out for text)`);
  if (a._.length) usage(`unexpected argument ${a._[0]}`);
  const verbose = !!(a.v || a.verbose);

  const target = openLab(flags);
  const report = await collectStatus(target, { namespace: ns, verbose });
  process.stdout.write(output === 'json' ? `${JSON.stringify(report, null, 2)}\n` : renderStatus(report, { verbose }));
  if (report.problems.length) process.exitCode = 1;
});
