// Which cluster a tool talks to, by kubectl's rules (client-go tools/clientcmd/loader.go `ClientConfigLoadingRules.Load`
// and `DirectClientConfig`, as kubectl 1.32 applies them; a test compares with the real kubectl):
//   --kubeconfig <file>   that file alone; a missing one is an error;
//   KUBECONFIG            else: a ':'-separated list, merged — the first file to name a cluster, user or context keeps
//                         it whole, the first non-empty current-context wins; empty entries and missing files are
//                         skipped;
//   ~/.kube/config        else.
//   --context <name>      replaces current-context; a name that is not there is an error.
// gwlab adds its labs: `--name <lab>` means that lab's own kubeconfig and context (it beats KUBECONFIG, and goes with
// --kubeconfig only as an error: two clusters). With none of --kubeconfig, --name and KUBECONFIG, the default lab
// (`gwlab`) when it exists under GWLAB_HOME, else ~/.kube/config.
//
// client-node's own loadFromDefault merges differently (a name in two files is an error, the last current-context
// wins, a missing file throws), hence the merge here.
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import { type Cluster, type Context, KubeConfig, type User } from '@kubernetes/client-node';
import { DEFAULT_LAB_NAME, type LabRecord, listLabs, readLabRecord } from '../state.ts';

export interface KubeconfigFlags {
  /** --kubeconfig */
  kubeconfig?: string;
  /** --context */
  context?: string;
  /** --name, when given on the command line (not defaulted). */
  name?: string;
  /** GWLAB_HOME (--home). */
  home: string;
  /** The environment (KUBECONFIG, HOME). */
  env?: NodeJS.ProcessEnv;
  /** kubectl's rules alone, without the default-lab step (`lab:up --cluster existing` picks a cluster that is not a lab). */
  kubectlOnly?: boolean;
}

export type KubeconfigSource = '--kubeconfig' | '--name' | 'KUBECONFIG' | 'default lab' | '~/.kube/config';

export interface ResolvedKubeconfig {
  kc: KubeConfig;
  /** The files read, in precedence order (one for every source but KUBECONFIG). */
  files: string[];
  /** The context in use. */
  context: string;
  source: KubeconfigSource;
  /** The lab this is, when the context and server are those of a lab under GWLAB_HOME. */
  rec?: LabRecord;
}

/** Reads each existing file of a KUBECONFIG-style list and merges them as kubectl does (first name wins). */
export function loadMerged(files: string[]): { kc: KubeConfig; loaded: string[] } {
  const clusters = new Map<string, Cluster>();
  const users = new Map<string, User>();
  const contexts = new Map<string, Context>();
  let current = '';
  const loaded: string[] = [];
  for (const f of files) {
    if (!f || !existsSync(f)) continue;
    const one = new KubeConfig();
    one.loadFromFile(f); // relative paths in it become absolute, against its folder
    loaded.push(f);
    for (const c of one.getClusters()) if (!clusters.has(c.name)) clusters.set(c.name, c);
    for (const u of one.getUsers()) if (!users.has(u.name)) users.set(u.name, u);
    for (const c of one.getContexts()) if (!contexts.has(c.name)) contexts.set(c.name, c);
    if (!current) current = one.getCurrentContext() ?? '';
  }
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [...clusters.values()],
    users: [...users.values()],
    contexts: [...contexts.values()],
    currentContext: current,
  });
  return { kc, loaded };
}

function labKubeconfig(name: string, home: string): { file: string; context: string; rec: LabRecord } {
  const rec = readLabRecord(name, home);
  if (!rec) {
    throw new Error(
      `--name ${name}: no lab named ${name} under ${home}; start one with: npm run lab:up -- --name ${name}`,
    );
  }
  return { file: rec.kubeconfig, context: (rec.context as string | undefined) ?? `gwlab-${name}`, rec };
}

/** The lab whose kubeconfig has this context name with this server, if any (a KUBECONFIG pointing at a lab). */
function labOf(home: string, context: string, server: string | undefined): LabRecord | undefined {
  for (const name of listLabs(home)) {
    const rec = readLabRecord(name, home);
    if (!rec || !existsSync(rec.kubeconfig)) continue;
    const ctx = (rec.context as string | undefined) ?? `gwlab-${name}`;
    if (ctx !== context) continue;
    try {
      const kc = new KubeConfig();
      kc.loadFromFile(rec.kubeconfig);
      kc.setCurrentContext(ctx);
      if (kc.getCurrentCluster()?.server === server) return rec;
    } catch {
      // an unreadable lab kubeconfig is not this one
    }
  }
  return undefined;
}

/** The kubeconfig, context and source a tool uses, by the rules in this file's header. */
export function resolveKubeconfig(f: KubeconfigFlags): ResolvedKubeconfig {
  const env = f.env ?? process.env;
  const defaultFile = join(env.HOME || homedir(), '.kube', 'config');
  let files: string[];
  let source: KubeconfigSource;
  let context = f.context;
  let rec: LabRecord | undefined;
  if (f.kubeconfig !== undefined) {
    if (f.name !== undefined) {
      throw new Error(
        `--name ${f.name} and --kubeconfig ${f.kubeconfig} each pick a cluster: give one (--name uses the lab's own kubeconfig)`,
      );
    }
    if (!existsSync(f.kubeconfig)) throw new Error(`--kubeconfig ${f.kubeconfig}: no such file`);
    files = [resolve(f.kubeconfig)];
    source = '--kubeconfig';
  } else if (f.name !== undefined) {
    const lab = labKubeconfig(f.name, f.home);
    files = [lab.file];
    context ??= lab.context;
    rec = lab.rec;
    source = '--name';
  } else if (env.KUBECONFIG) {
    files = env.KUBECONFIG.split(delimiter)
      .filter(Boolean)
      .map((p) => resolve(p));
    source = 'KUBECONFIG';
  } else if (!f.kubectlOnly && readLabRecord(DEFAULT_LAB_NAME, f.home)) {
    const lab = labKubeconfig(DEFAULT_LAB_NAME, f.home);
    files = [lab.file];
    context ??= lab.context;
    rec = lab.rec;
    source = 'default lab';
  } else if (existsSync(defaultFile)) {
    files = [defaultFile];
    source = '~/.kube/config';
  } else {
    throw new Error(
      `no cluster to talk to: no --kubeconfig, --name or KUBECONFIG, no lab ${DEFAULT_LAB_NAME} under ${f.home} and no ${defaultFile}; ` +
        'start a lab with `npm run lab:up`, or pass --kubeconfig <file> [--context <ctx>]',
    );
  }
  const { kc, loaded } = loadMerged(files);
  if (!loaded.length) throw new Error(`KUBECONFIG=${env.KUBECONFIG}: none of its files exists`);
  const where = source === 'KUBECONFIG' ? `KUBECONFIG (${loaded.join(delimiter)})` : loaded[0];
  if (context !== undefined) {
    if (!kc.getContextObject(context)) {
      const have = kc.getContexts().map((c) => c.name);
      throw new Error(
        `context ${context} is not in ${where}; its contexts: ${have.join(', ') || '(none)'} (kubectl: context was not found for specified context: ${context})`,
      );
    }
    kc.setCurrentContext(context);
  }
  const ctx = kc.getCurrentContext();
  if (!ctx || !kc.getContextObject(ctx)) {
    throw new Error(
      ctx
        ? `current-context ${ctx} of ${where} names no context in it; pass --context <name>`
        : `current-context is not set in ${where}; pass --context <name>`,
    );
  }
  rec ??= labOf(f.home, ctx, kc.getCurrentCluster()?.server);
  return { kc, files: loaded, context: ctx, source, ...(rec ? { rec } : {}) };
}

/**
 * A kubeconfig holding only the resolved context, its cluster and its user (paths made absolute by the loader), as
 * JSON (which is YAML): the private copy an `existing` lab keeps, so a later edit of the user's files does not move the
 * lab to another cluster, and credentials of unrelated contexts are not copied.
 */
export function kubeconfigOfContext(r: ResolvedKubeconfig): string {
  const ctx = r.kc.getContextObject(r.context)!;
  const cluster = r.kc.getCluster(ctx.cluster);
  const user = r.kc.getUser(ctx.user);
  if (!cluster) throw new Error(`context ${r.context} names cluster ${ctx.cluster}, which no kubeconfig file defines`);
  const only = new KubeConfig();
  only.loadFromOptions({ clusters: [cluster], users: user ? [user] : [], contexts: [ctx], currentContext: r.context });
  return only.exportConfig();
}

/** One line for people: where the cluster came from. */
export function describeKubeconfig(r: ResolvedKubeconfig): string {
  const lab = r.rec ? `lab ${r.rec.name}, ` : '';
  return `${lab}context ${r.context} from ${r.source === 'KUBECONFIG' ? `KUBECONFIG=${r.files.join(delimiter)}` : `${r.source} ${r.files[0]}`}`;
}
