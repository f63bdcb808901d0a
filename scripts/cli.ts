// Shared bits of the command-line entry points: the cluster a tool talks to (kubectl's rules,
// lab/toolkit/kubeconfig.ts); the flags, lab name/home and failing with a next step are flags.ts's, re-exported here.
import { DEFAULT_LAB_NAME, type LabRecord } from '../lab/state.ts';
import { Kube } from '../lab/toolkit/kube.ts';
import { type KubeconfigSource, resolveKubeconfig } from '../lab/toolkit/kubeconfig.ts';
import type { CommonFlags } from './flags.ts';

export { type CommonFlags, parseFlags, run, usageError } from './flags.ts';

/** The usage lines every tool that talks to a cluster shares: how it picks one. */
export const CLUSTER_USAGE = `cluster, by kubectl's rules:
  --kubeconfig <file>   that kubeconfig alone
  --name <lab>          else: a lab started by npm run lab:up (its own kubeconfig and context)
  $KUBECONFIG           else: the ':'-separated files, merged as kubectl does (the first to name a thing wins)
                        else: the lab ${DEFAULT_LAB_NAME} if it exists (GWLAB_HOME or --home), else ~/.kube/config
  --context <ctx>       the context to use (default: the kubeconfig's current-context, or the lab's)`;

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
