// npm run lab:down [-- --name <lab>] [--keep-state]: stops the lab and everything it started.
import { labDown } from '../lab/lifecycle.ts';
import { Progress } from '../lab/progress.ts';
import { parseFlags, run } from './cli.ts';

await run(async () => {
  const { name, home, args } = parseFlags({ boolean: ['keep-state'] });
  if (args.help) {
    console.log('usage: npm run lab:down -- [--name <lab>] [--keep-state]');
    return;
  }
  const progress = new Progress();
  const r = await labDown({ name, home, progress, keepState: args['keep-state'] });
  console.log(r.found ? `Lab ${name} is down.` : `No lab named ${name} under ${home}: nothing to do.`);
});
