// The shapes shared by collect.ts and its collectors: what a collector is given, what it may report back, and the
// index that records every collector's outcome (index.json of a collection, index.md of a bundle).
import type { Kube } from '../../toolkit/kube.ts';
import type { Inventory } from './inventory.ts';
import type { Output } from './output.ts';

export interface CollectOptions {
  /** The namespaces to collect; undefined collects every namespace. */
  namespaces?: string[];
  /** Also the previous instance's log of each container that has restarted. */
  previousLogs?: boolean;
  /** Also each proxy's listeners, clusters and server_info. */
  extended?: boolean;
  /** More collectors run alongside the standard ones (the bundle's cluster information). */
  extra?: Collector[];
  /** A collector still running after this long is recorded as failed and its later writes are dropped. */
  collectorTimeoutMs?: number;
}

export interface CollectContext {
  kube: Kube;
  inventory: Inventory;
  options: CollectOptions;
}

/** What a collector may say besides the files it wrote; throwing means it failed as a whole. */
export interface Outcome {
  /** Set when there was nothing this collector could do, with the reason (e.g. a proxy pod that is not Ready). */
  skipped?: string;
  /** Facts worth knowing that are not failures (a kind the cluster does not serve, a log cut to its tail). */
  notes?: string[];
  /** Parts that failed while the rest was collected: the collector is then recorded as failed. */
  errors?: string[];
}

export interface Collector {
  name: string;
  /** One line on what it collects, for index.md. */
  what: string;
  run(ctx: CollectContext, out: Output): Promise<Outcome | undefined>;
}

export type CollectorStatus = 'ok' | 'failed' | 'skipped';

export interface CollectorEntry {
  name: string;
  what: string;
  status: CollectorStatus;
  /** Paths relative to the collection folder. */
  files: string[];
  ms: number;
  error?: string;
  reason?: string;
  notes?: string[];
}

export interface RedactionSummary {
  /** Secrets whose values were scrubbed from every written file. */
  secrets: number;
  /** Distinct strings searched for (each value decoded, base64 and escaped, and the kubeconfig's credentials). */
  needles: number;
  /** Occurrences replaced by `<redacted>` across all files. */
  replaced: number;
  /** Why Secrets could not be read, in which case only the kubeconfig's credentials were scrubbed. */
  error?: string;
}

export interface CollectIndex {
  started: string;
  durationMs: number;
  namespaces: string[] | 'all';
  collectors: CollectorEntry[];
  redaction: RedactionSummary;
}
