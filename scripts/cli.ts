// Shared bits of the command-line entry points: flags, lab name/home, the cluster a tool talks to (kubectl's rules,
// lab/toolkit/kubeconfig.ts), and failing with a next step.
import { minimist } from 'zx';
import { StepFailed } from '../lab/progress.ts';
import { DEFAULT_LAB_NAME, gwlabHome, type LabRecord } from '../lab/state.ts';
import { Kube } from '../lab/toolkit/kube.ts';
import { type KubeconfigSource, resolveKubeconfig } from '../lab/toolkit/kubeconfig.ts';

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

/** The usage lines every tool that talks to a cluster shares: how it picks one. */
export const CLUSTER_USAGE = `cluster, by kubectl's rules:
  --kubeconfig <file>   that kubeconfig alone
  --name <lab>          else: a lab started by npm run lab:up (its own kubeconfig and context)
  $KUBECONFIG           else: the ':'-separated files, merged as kubectl does (the first to name a thing wins)
                        else: the lab ${DEFAULT_LAB_NAME} if it exists (GWLAB_HOME or --home), else ~/.kube/config
  --context <ctx>       the context to use (default: the kubeconfig's current-context, or the lab's)`;

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

export interface LabTarget {
  kube: Kube;
  /** The kubeconfig file(s) read, ':'-separated as in KUBECONFIG. */
  kubeconfig: string;
  context: string;
  source: KubeconfigSource;
  /** The same cluster for kubectl: `kubectl --kubeconfig <f> --context <c>` (no --kubeconfig when from KUBECONFIG). */
  kubectl: string;
  /** Set when the target is a lab started by lab:up (any backend). */
  rec?: LabRecord;
}

/** The cluster a tool talks to: CLUSTER_USAGE's rules (lab/toolkit/kubeconfig.ts). */
export function openLab(flags: CommonFlags): LabTarget {
  const r = resolveKubeconfig({
    kubeconfig: flags.args.kubeconfig as string | undefined,
    context: flags.args.context as string | undefined,
    name: flags.nameGiven ? flags.name : undefined,
    home: flags.home,
  });
  const kubectl = `kubectl${r.source === 'KUBECONFIG' ? '' : ` --kubeconfig ${r.files[0]}`} --context ${r.context}`;
  return {
    kube: new Kube(r.kc),
    kubeconfig: r.files.join(':'),
    context: r.context,
    source: r.source,
    kubectl,
    ...(r.rec ? { rec: r.rec } : {}),
  };
}
