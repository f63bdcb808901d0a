// npm run lab:reload [-- --kubeconfig <f> | --name <lab>] [--context <c>]: restart the system's pods on the code
// under system/ (on a kind lab: rebuild, load, roll) and print what was rolled.
import { Progress } from '../lab/progress.ts';
import { reloadSystem } from '../lab/reload.ts';
import { CLUSTER_USAGE, openLab, parseFlags, run } from './cli.ts';

const USAGE = `usage: npm run lab:reload -- [--kubeconfig <f> | --name <lab>] [--context <c>]
  restarts every deployment running the system image (a kind lab rebuilds and loads the image first)
${CLUSTER_USAGE}`;

await run(async () => {
  const flags = parseFlags({});
  if (flags.args.help) {
    console.log(USAGE);
    return;
  }
  const target = openLab(flags);
  // A cluster that is no lab of ours is handled as the existing backend: the pods restart on the image it has.
  const rec = target.rec ?? {
    name: target.context,
    index: -1,
    backend: 'existing' as const,
    kubeconfig: target.kubeconfig,
  };
  const progress = new Progress();
  const rolled = await reloadSystem(target.kube, rec, progress);
  console.log(
    rolled.length
      ? `Rolled ${rolled.length}:\n${rolled.map((r) => `  deployment ${r.namespace}/${r.name}`).join('\n')}`
      : 'Nothing runs the system image yet: nothing to roll.',
  );
});
