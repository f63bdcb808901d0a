// The lab's state at one moment, for a failed scenario (scenarios/support/artifacts.ts) and for a bug report
// (lab:bundle): a set of named collectors — resources, events, logs, the control plane's admin, each proxy's admin —
// run side by side and independently. A collector that throws or times out is recorded as failed with its error and
// the others still run; what each wrote, and how it went, is in index.json. Nothing is written to the cluster: only
// reads and port-forwards. Secret values are scrubbed from every written file before collect returns.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Kube } from '../toolkit/kube.ts';
import { controlPlaneCollector, proxyCollectors } from './collect/admin.ts';
import { eventsCollector } from './collect/events.ts';
import { Inventory } from './collect/inventory.ts';
import { logsCollector } from './collect/logs.ts';
import { Output } from './collect/output.ts';
import { kubeconfigCredentials, needlesFor, scrub, scrubFiles } from './collect/redact.ts';
import { resourcesCollector } from './collect/resources.ts';
import type {
  CollectContext,
  CollectIndex,
  CollectOptions,
  Collector,
  CollectorEntry,
  RedactionSummary,
} from './collect/types.ts';
import { mapLimit } from './proxies.ts';

export type { CollectIndex, CollectOptions, Collector, CollectorEntry } from './collect/types.ts';

export const INDEX_FILE = 'index.json';
const DEFAULT_COLLECTOR_TIMEOUT_MS = 60_000;
/** Collectors at a time; each bounds its own API calls or port-forwards further. */
const PARALLEL_COLLECTORS = 6;

function timeout(ms: number, name: string): { promise: Promise<never>; cancel: () => void } {
  let timer: NodeJS.Timeout | undefined;
  const promise = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`collector ${name} did not finish within ${ms / 1000} s`)), ms);
  });
  return { promise, cancel: () => clearTimeout(timer) };
}

async function runOne(ctx: CollectContext, c: Collector, dir: string, limitMs: number): Promise<CollectorEntry> {
  const out = new Output(dir);
  const t0 = performance.now();
  const entry: CollectorEntry = { name: c.name, what: c.what, status: 'ok', files: out.files, ms: 0 };
  const limit = timeout(limitMs, c.name);
  try {
    const r = await Promise.race([c.run(ctx, out), limit.promise]);
    if (r?.notes?.length) entry.notes = r.notes;
    if (r?.errors?.length) {
      entry.status = 'failed';
      entry.error = r.errors.join('\n');
    } else if (r?.skipped) {
      entry.status = 'skipped';
      entry.reason = r.skipped;
    }
  } catch (err) {
    entry.status = 'failed';
    entry.error = (err as Error).message ?? String(err);
  } finally {
    limit.cancel();
    await out.close();
  }
  entry.files.sort();
  entry.ms = Math.round(performance.now() - t0);
  return entry;
}

/**
 * Collects into `dir` (created if needed) and writes `dir/index.json`. Never throws for a collector's failure; throws
 * only when `dir` cannot be written.
 */
export async function collect(kube: Kube, dir: string, opts: CollectOptions = {}): Promise<CollectIndex> {
  const started = new Date();
  const t0 = performance.now();
  await mkdir(dir, { recursive: true });
  const inventory = new Inventory(kube, opts.namespaces);
  const ctx: CollectContext = { kube, inventory, options: opts };

  // Secret values are needed for the scrub at the end; reading them first also serves the resources collector.
  const redaction: RedactionSummary = { secrets: 0, needles: 0, replaced: 0 };
  let needles: string[];
  try {
    const secrets = await inventory.secrets();
    redaction.secrets = secrets.length;
    needles = needlesFor(secrets, kubeconfigCredentials(kube.kc));
  } catch (err) {
    redaction.error = `Secrets could not be read (${(err as Error).message}): only the kubeconfig's credentials were scrubbed`;
    needles = needlesFor([], kubeconfigCredentials(kube.kc));
  }
  redaction.needles = needles.length;

  const collectors: Collector[] = [
    resourcesCollector,
    eventsCollector,
    logsCollector,
    controlPlaneCollector,
    ...(await proxyCollectors(kube, opts.namespaces)),
    ...(opts.extra ?? []),
  ];
  const limitMs = opts.collectorTimeoutMs ?? DEFAULT_COLLECTOR_TIMEOUT_MS;
  const entries = await mapLimit(collectors, PARALLEL_COLLECTORS, (c) => runOne(ctx, c, dir, limitMs));

  redaction.replaced = await scrubFiles(
    dir,
    entries.flatMap((e) => e.files),
    needles,
  );
  const index: CollectIndex = {
    started: started.toISOString(),
    durationMs: Math.round(performance.now() - t0),
    namespaces: inventory.namespaces ?? 'all',
    collectors: entries,
    redaction,
  };
  // Error messages can quote what a server answered: the index is scrubbed like every other file, and what is
  // returned is what was written.
  const text = scrub(`${JSON.stringify(index, null, 2)}\n`, needles).text;
  await writeFile(join(dir, INDEX_FILE), text);
  return JSON.parse(text) as CollectIndex;
}
