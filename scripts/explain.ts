// npm run explain -- <kind>/<name> [-n <namespace>] [-o json] [--kubeconfig <f> | --name <lab>] [--context <c>]
// Answers "why is this policy not applied / this route not served" in one command, from the Kubernetes API and the
// admin servers (by port-forward), changing nothing. Exit code 0 when healthy, 1 when something is wrong.
import { explainTarget, parseTarget } from '../lab/tools/explain/explain.ts';
import { renderReport } from '../lab/tools/explain/render.ts';
import { CLUSTER_USAGE, openLab, parseFlags, run } from './cli.ts';

const USAGE = `usage: npm run explain -- <kind>/<name> [-n <namespace>] [-o json] [--kubeconfig <f> | --name <lab>] [--context <c>]
kinds: httproute, gateway, trafficpolicy (tp), gatewayextension (ge), listenerpolicy (lp)
  For a route: its status, its Gateways' proxies (running? NACKs?), and every policy that targets or selects it, with
  whether its settings are really in each proxy's config_dump; when one is not, the rule of contract section 7 that
  explains it (selector matching nothing, an older policy winning, a missing ReferenceGrant, with the YAML to apply).
  A policy that a more specific one overrides (route over Gateway) is the designed precedence: a note, not a problem.
${CLUSTER_USAGE}
exit code: 0 healthy, 1 something is wrong, 2 bad arguments`;

await run(async () => {
  const flags = parseFlags({ string: ['namespace', 'output'], alias: { n: 'namespace', o: 'output' } });
  const [arg] = flags.args._ as string[];
  if (flags.args.help || !arg) {
    console.log(USAGE);
    if (!flags.args.help) process.exitCode = 2;
    return;
  }
  const output = (flags.args.output as string | undefined) ?? 'text';
  let target: ReturnType<typeof parseTarget>;
  try {
    if (output !== 'text' && output !== 'json') throw new Error(`-o ${output}: use -o json (or leave it out for text)`);
    target = parseTarget(arg, (flags.args.namespace as string | undefined) ?? 'default');
  } catch (err) {
    console.error(`${(err as Error).message}\n\n${USAGE}`);
    process.exitCode = 2;
    return;
  }
  const { kube } = openLab(flags);
  const report = await explainTarget(kube, target);
  process.stdout.write(output === 'json' ? `${JSON.stringify(report, null, 2)}\n` : renderReport(report));
  process.exitCode = report.healthy ? 0 : 1;
});
