// Shared bits of the command-line entry points: flags, lab name/home, and failing with a next step.
import { minimist } from 'zx';
import { StepFailed } from '../lab/progress.ts';
import { DEFAULT_LAB_NAME, gwlabHome } from '../lab/state.ts';

export interface CommonFlags {
  name: string;
  home: string;
  args: ReturnType<typeof minimist>;
}

export function parseFlags(spec: {
  boolean?: string[];
  string?: string[];
  alias?: Record<string, string>;
}): CommonFlags {
  const args = minimist(process.argv.slice(2), {
    boolean: ['help', ...(spec.boolean ?? [])],
    string: ['name', 'home', ...(spec.string ?? [])],
    alias: { h: 'help', ...(spec.alias ?? {}) },
  });
  const home = (args.home as string | undefined) ?? gwlabHome();
  process.env.GWLAB_HOME = home;
  return { name: (args.name as string | undefined) ?? DEFAULT_LAB_NAME, home, args };
}

/** Runs main; on failure prints the reason and the next step, and exits non-zero. */
export async function run(main: () => Promise<void>): Promise<void> {
  try {
    await main();
  } catch (err) {
    if (err instanceof StepFailed) {
      console.error(`\n✗ ${err.message}`);
    } else {
      console.error(`\n✗ ${(err as Error).message ?? err}`);
    }
    process.exit(1);
  }
}
