// The flags every command-line entry point shares (--name, --home, --help, --kubeconfig, --context) and failing with a
// next step. Split from cli.ts so that lab:up reads its flags and starts the lab process before the Kubernetes client
// (@kubernetes/client-node, ~870 modules) is loaded: cli.ts's openLab needs it, these do not.
import minimist from 'minimist';
import { StepFailed } from '../lab/progress.ts';
import { DEFAULT_LAB_NAME, gwlabHome } from '../lab/state.ts';

export interface CommonFlags {
  /** The lab name: --name, else the default lab's. */
  name: string;
  /** --name was given on the command line (it then picks the cluster, above KUBECONFIG). */
  nameGiven: boolean;
  home: string;
  /** --home was given on the command line. */
  homeGiven: boolean;
  args: ReturnType<typeof minimist>;
}

export function parseFlags(spec: {
  boolean?: string[];
  string?: string[];
  alias?: Record<string, string>;
}): CommonFlags {
  const args = minimist(process.argv.slice(2), {
    boolean: ['help', ...(spec.boolean ?? [])],
    string: ['name', 'home', 'kubeconfig', 'context', ...(spec.string ?? [])],
    alias: { h: 'help', ...(spec.alias ?? {}) },
  });
  for (const f of ['name', 'home', 'kubeconfig', 'context']) {
    if (Array.isArray(args[f])) throw new Error(`--${f} is given ${args[f].length} times: give it once`);
    if (args[f] === '') throw new Error(`--${f} needs a value`);
  }
  const home = (args.home as string | undefined) ?? gwlabHome();
  process.env.GWLAB_HOME = home;
  return {
    name: (args.name as string | undefined) ?? DEFAULT_LAB_NAME,
    nameGiven: args.name !== undefined,
    home,
    homeGiven: args.home !== undefined,
    args,
  };
}

/** A usage error: says why, then the tool's usage, on stderr, and exits 2. */
export function usageError(usage: string, why: string): never {
  console.error(`${why}\n\n${usage}`);
  process.exit(2);
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
