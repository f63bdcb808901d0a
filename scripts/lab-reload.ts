// npm run lab:reload [-- --name <lab>]: restart the system's pods on the code under system/ (on kind: rebuild, load,
// roll) and print what was rolled.
import { Progress } from '../lab/progress.ts';
import { reloadSystem } from '../lab/reload.ts';
import { readLabRecord } from '../lab/state.ts';
import { Kube } from '../lab/toolkit/kube.ts';
import { parseFlags, run } from './cli.ts';

await run(async () => {
  const { name, home, args } = parseFlags({});
  if (args.help) {
    console.log('usage: npm run lab:reload -- [--name <lab>]');
    return;
  }
  const rec = readLabRecord(name, home);
  if (!rec) throw new Error(`no lab named ${name} under ${home}; start one with npm run lab:up`);
  const kube = Kube.fromFile(rec.kubeconfig, (rec.context as string | undefined) ?? `gwlab-${name}`);
  const progress = new Progress();
  const rolled = await reloadSystem(kube, rec, progress);
  console.log(
    rolled.length
      ? `Rolled ${rolled.length}:\n${rolled.map((r) => `  deployment ${r.namespace}/${r.name}`).join('\n')}`
      : 'Nothing runs the system image yet: nothing to roll.',
  );
});
