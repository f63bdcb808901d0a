// Shared bits of the command-line entry points: flags, lab name/home, and failing with a next step.
import { minimist } from 'zx';
import { StepFailed } from '../lab/progress.ts';
import { DEFAULT_LAB_NAME, gwlabHome, type LabRecord, readLabRecord } from '../lab/state.ts';
import { Kube } from '../lab/toolkit/kube.ts';

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
    string: ['name', 'home', 'kubeconfig', 'context', ...(spec.string ?? [])],
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

export interface LabTarget {
  kube: Kube;
  kubeconfig: string;
  context?: string;
  /** Set when the target is a lab started by lab:up (any backend). */
  rec?: LabRecord;
}

/**
 * The cluster a tool talks to: `--kubeconfig`/`--context` when given (any cluster), else the lab `--name` (default
 * gwlab) started by lab:up, on whatever backend it runs.
 */
export function openLab(flags: CommonFlags): LabTarget {
  const kubeconfig = flags.args.kubeconfig as string | undefined;
  const context = flags.args.context as string | undefined;
  if (kubeconfig) return { kube: Kube.fromFile(kubeconfig, context), kubeconfig, context };
  const rec = readLabRecord(flags.name, flags.home);
  if (!rec) {
    throw new Error(
      `no lab named ${flags.name} under ${flags.home}: start one with \`npm run lab:up\`, or pass --kubeconfig <file> [--context <ctx>]`,
    );
  }
  const ctx = context ?? (rec.context as string | undefined);
  return { kube: Kube.fromFile(rec.kubeconfig, ctx), kubeconfig: rec.kubeconfig, context: ctx, rec };
}
