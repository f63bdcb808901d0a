// The API server's storage, in the style of k3s's kine: one global revision counter is the resourceVersion of every
// object, the watch cursor and the optimistic-concurrency check. Each write appends one row to an SQLite log
// (node:sqlite, WAL mode) before it is acknowledged, so acknowledged writes survive a SIGKILL of the process (the WAL
// is in the OS page cache once the statement returns; synchronous=NORMAL guards against process death, not power loss).
// Current objects live in memory for fast list/get; the most recent events are kept in memory for watches, and the
// log is compacted so it keeps at least `keepRevisions` revisions (≥ 1,000) plus the latest row of every live key.
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import type { ObjectMeta } from '../../../system/shared/kobject.ts';

/**
 * An object as a client sent it or the store holds it: system/shared/kobject.ts's shape before validation, so every
 * field may be missing (a name comes from generateName) and anything else may be there.
 */
export type K8sObject = {
  apiVersion?: string;
  kind?: string;
  metadata: Partial<ObjectMeta> & { [k: string]: any };
  [k: string]: any;
};

export type EventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface StoreEvent {
  rev: number;
  type: EventType;
  bucket: string;
  key: string;
  obj: K8sObject;
  /** The object before this event (for selector transitions in watches); absent when unknown. */
  prev?: K8sObject;
}

export interface StoreOptions {
  /** SQLite file; omitted = memory only (tests of pure logic). */
  file?: string;
  /** Events kept in memory for watches to resume from, at most (default 10,000; at least 1,000). */
  historySize?: number;
  /**
   * How long an event stays resumable (default 5 min, kube-apiserver's --etcd-compaction-interval): older events leave
   * the history (watches from before them get 410 Expired and relist, as from a compacted etcd), except the latest
   * HISTORY_FLOOR, so a lab that lives for days holds minutes of history, not up to `historySize` events.
   */
  historyWindowMs?: number;
  /** The clock of the history window (tests). */
  now?: () => number;
  /** Revisions the log keeps when compacting (default 10,000). */
  keepRevisions?: number;
}

/** kube-apiserver's --etcd-compaction-interval: how long a revision stays resumable by default. */
export const HISTORY_WINDOW_MS = 5 * 60_000;
/** Events kept whatever their age (kube-apiserver's watch cache keeps at least 100 per resource). */
export const HISTORY_FLOOR = 100;

type Bucket = { objects: Map<string, K8sObject>; sorted?: string[] };

/** `ns/name` for namespaced objects, `name` for cluster-scoped ones. Sorting keys gives Kubernetes' list order. */
export function objectKey(namespace: string | undefined, name: string): string {
  return namespace ? `${namespace}/${name}` : name;
}

export class Store {
  private rev = 0;
  private readonly buckets = new Map<string, Bucket>();
  private history: StoreEvent[] = [];
  /** When each history event was emitted (parallel to `history`). */
  private historyAt: number[] = [];
  private historyStart = 0;
  /** Watches can resume from any revision ≥ this one. */
  private oldestResumable = 0;
  /**
   * The revision when this process opened the store. The history rebuilt from the log cannot always tell what a key
   * held before a write (compaction may have dropped the row the write replaced), so only the history written since
   * can rebuild an earlier state (`listAt`).
   */
  private openedAt = 0;
  private readonly historySize: number;
  private readonly historyWindowMs: number;
  private readonly now: () => number;
  private readonly keepRevisions: number;
  private readonly db?: DatabaseSync;
  private insert?: StatementSync;
  private writesSinceCompact = 0;
  private writesSinceCheckpoint = 0;
  private maintenanceScheduled = false;
  /** Group commit: writes of one event-loop turn share one SQLite transaction; their events go out at commit. */
  private inTxn = false;
  private pending: StoreEvent[] = [];
  private commitScheduled = false;
  private failed?: Error;
  /** Revisions that a later write replaced (and tombstones): what compaction may drop once old enough. */
  private superseded: number[] = [];
  private deleteRow?: StatementSync;
  private readonly listeners = new Map<string, Set<(ev: StoreEvent) => void>>();
  /** JSON of stored objects, computed once at write time (for the log) and reused by get, list and watch. */
  private readonly serialized = new WeakMap<object, string>();

  constructor(opts: StoreOptions = {}) {
    this.historySize = Math.max(1000, opts.historySize ?? 10_000);
    this.historyWindowMs = opts.historyWindowMs ?? HISTORY_WINDOW_MS;
    this.now = opts.now ?? Date.now;
    this.keepRevisions = Math.max(1000, opts.keepRevisions ?? 10_000);
    if (opts.file) {
      mkdirSync(dirname(opts.file), { recursive: true });
      this.db = new DatabaseSync(opts.file);
      // One process owns the store: exclusive locking spares the per-transaction lock calls (and refuses a second
      // server on the same lab).
      try {
        this.db.exec('PRAGMA locking_mode = EXCLUSIVE; BEGIN EXCLUSIVE; COMMIT;');
      } catch (e) {
        this.db.close();
        throw new Error(
          `the store ${opts.file} is in use by another process (is this lab already running?): ${(e as Error).message}`,
        );
      }
      this.db.exec(`
        PRAGMA journal_mode = WAL;
        PRAGMA synchronous = NORMAL;
        PRAGMA wal_autocheckpoint = 0;
        CREATE TABLE IF NOT EXISTS log (
          rev INTEGER PRIMARY KEY,
          bucket TEXT NOT NULL,
          key TEXT NOT NULL,
          deleted INTEGER NOT NULL,
          value TEXT NOT NULL
        );
        DROP INDEX IF EXISTS log_key;
        CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT NOT NULL);
      `);
      this.insert = this.db.prepare('INSERT INTO log (rev, bucket, key, deleted, value) VALUES (?, ?, ?, ?, ?)');
      this.deleteRow = this.db.prepare('DELETE FROM log WHERE rev = ?');
      this.load();
      this.openedAt = this.rev;
    }
  }

  private load(): void {
    const db = this.db!;
    const metaRev = db.prepare("SELECT v FROM meta WHERE k = 'compactedRev'").get() as { v: string } | undefined;
    const maxRow = db.prepare('SELECT MAX(rev) AS m FROM log').get() as { m: number | null };
    this.rev = Math.max(Number(metaRev?.v ?? 0), maxRow.m ?? 0);
    // One pass over the log in revision order: the latest row of each key is the current object (or a tombstone),
    // every row a later row replaces is compactable, and the tail rebuilds the watch history (so watches from before
    // a restart resume), each event with the object it replaced.
    const windowStart = Math.max(0, this.rev - this.historySize);
    const latest = new Map<
      string,
      { rev: number; deleted: number; value: string; bucket: string; key: string; obj?: K8sObject }
    >();
    const parse = (r: { value: string; obj?: K8sObject }) => {
      r.obj ??= JSON.parse(r.value) as K8sObject;
      return r.obj;
    };
    let first = 0;
    for (const row of db
      .prepare('SELECT rev, bucket, key, deleted, value FROM log ORDER BY rev')
      .iterate() as Iterable<Row>) {
      const id = `${row.bucket}\u0000${row.key}`;
      const prev = latest.get(id);
      if (prev) this.superseded.push(prev.rev);
      if (row.deleted) this.superseded.push(row.rev);
      const cur = { ...row };
      if (row.rev > windowStart) {
        if (!first) first = row.rev;
        const obj = parse(cur);
        const before = prev && !prev.deleted ? parse(prev) : undefined;
        const type: EventType = row.deleted ? 'DELETED' : before ? 'MODIFIED' : 'ADDED';
        this.history.push({ rev: row.rev, type, bucket: row.bucket, key: row.key, obj, prev: before });
        // The log has no write times: events rebuilt at start count from now.
        this.historyAt.push(this.now());
      }
      latest.set(id, cur);
    }
    for (const r of latest.values()) {
      if (r.deleted) continue;
      const o = parse(r);
      this.serialized.set(o, r.value);
      this.bucket(r.bucket).objects.set(r.key, o);
    }
    this.oldestResumable = first ? first - 1 : this.rev;
  }

  private bucket(name: string): Bucket {
    let b = this.buckets.get(name);
    if (!b) {
      b = { objects: new Map() };
      this.buckets.set(name, b);
    }
    return b;
  }

  revision(): number {
    return this.rev;
  }

  /**
   * The revision up to which every event has reached the subscribers. Writes of this event-loop turn have their
   * revisions already (revision() counts them, and reads see them) but their events wait for the commit, so a watch
   * or a bookmark must not claim them as sent.
   */
  committedRevision(): number {
    return this.pending.length ? this.pending[0].rev - 1 : this.rev;
  }

  /** JSON of an object; free for stored objects (cached at write), computed and cached for others. */
  json(obj: object): string {
    let s = this.serialized.get(obj);
    if (s === undefined) {
      s = JSON.stringify(obj);
      this.serialized.set(obj, s);
    }
    return s;
  }

  /** The oldest resourceVersion a watch can start from without 410 Expired. */
  oldestRevision(): number {
    return this.oldestResumable;
  }

  get(bucket: string, key: string): K8sObject | undefined {
    return this.buckets.get(bucket)?.objects.get(key);
  }

  count(bucket: string): number {
    return this.buckets.get(bucket)?.objects.size ?? 0;
  }

  /** Objects of a bucket in key order, optionally only one namespace's. */
  list(bucket: string, namespace?: string): K8sObject[] {
    const b = this.buckets.get(bucket);
    if (!b) return [];
    if (!b.sorted) b.sorted = [...b.objects.keys()].sort();
    let keys = b.sorted;
    if (namespace) {
      const prefix = `${namespace}/`;
      const start = lowerBound(keys, prefix);
      let end = start;
      while (end < keys.length && keys[end].startsWith(prefix)) end++;
      keys = keys.slice(start, end);
    }
    const out: K8sObject[] = new Array(keys.length);
    for (let i = 0; i < keys.length; i++) out[i] = b.objects.get(keys[i])!;
    return out;
  }

  /**
   * Objects of a bucket (optionally one namespace's) as they were at revision `rev`, in key order: the current ones
   * with every key written since put back to what it held then (from the watch history, whose events carry the
   * object they replaced). 'expired' when the history no longer reaches back to `rev` (or `rev` predates this
   * process). This is what keeps the pages of a `limit`/`continue` list consistent with its first page.
   */
  listAt(bucket: string, namespace: string | undefined, rev: number): K8sObject[] | 'expired' {
    if (rev >= this.rev) return this.list(bucket, namespace);
    if (rev < this.openedAt) return 'expired';
    const evs = this.since(bucket, rev);
    if (evs === 'expired') return 'expired';
    // Writes of this event-loop turn are not in the history until their commit.
    for (const ev of this.pending) if (ev.bucket === bucket && ev.rev > rev) evs.push(ev);
    if (!evs.length) return this.list(bucket, namespace);
    // The first event of a key after `rev` tells what the key held at `rev`: nothing if it was a create.
    const then = new Map<string, K8sObject | undefined>();
    for (const ev of evs) if (!then.has(ev.key)) then.set(ev.key, ev.type === 'ADDED' ? undefined : ev.prev);
    const prefix = namespace ? `${namespace}/` : '';
    const objects = new Map<string, K8sObject>();
    const b = this.buckets.get(bucket);
    if (b) for (const [k, o] of b.objects) if (k.startsWith(prefix) && !then.has(k)) objects.set(k, o);
    for (const [k, o] of then) if (o && k.startsWith(prefix)) objects.set(k, o);
    return [...objects.keys()].sort().map((k) => objects.get(k)!);
  }

  /** Keys of a bucket in order (for continue tokens). */
  sortedKeys(bucket: string): string[] {
    const b = this.buckets.get(bucket);
    if (!b) return [];
    if (!b.sorted) b.sorted = [...b.objects.keys()].sort();
    return b.sorted;
  }

  /** Bucket names that hold at least one object. */
  bucketNames(): string[] {
    return [...this.buckets.entries()].filter(([, b]) => b.objects.size > 0).map(([n]) => n);
  }

  /**
   * Writes `obj` (create or update) or deletes the key. The object gets the new revision as its resourceVersion and
   * must not be mutated afterwards by anyone (it is shared with readers and the watch history).
   */
  put(bucket: string, key: string, obj: K8sObject): StoreEvent {
    const b = this.bucket(bucket);
    const prev = b.objects.get(key);
    const rev = this.rev + 1;
    obj.metadata.resourceVersion = String(rev);
    const json = JSON.stringify(obj);
    this.persist(rev, bucket, key, 0, json);
    if (prev) this.superseded.push(Number(prev.metadata.resourceVersion));
    this.serialized.set(obj, json);
    this.rev = rev;
    if (!prev) b.sorted = undefined;
    b.objects.set(key, obj);
    return this.queue({ rev, type: prev ? 'MODIFIED' : 'ADDED', bucket, key, obj, prev });
  }

  remove(bucket: string, key: string, finalObj?: K8sObject): StoreEvent | undefined {
    const b = this.buckets.get(bucket);
    const prev = b?.objects.get(key);
    if (!b || !prev) return undefined;
    const rev = this.rev + 1;
    const obj: K8sObject = finalObj ?? { ...prev, metadata: { ...prev.metadata } };
    obj.metadata.resourceVersion = String(rev);
    const json = JSON.stringify(obj);
    this.persist(rev, bucket, key, 1, json);
    this.superseded.push(Number(prev.metadata.resourceVersion), rev);
    this.serialized.set(obj, json);
    this.rev = rev;
    b.objects.delete(key);
    b.sorted = undefined;
    return this.queue({ rev, type: 'DELETED', bucket, key, obj, prev });
  }

  private persist(rev: number, bucket: string, key: string, deleted: number, json: string): void {
    if (this.failed) throw new Error(`storage failed earlier (${this.failed.message}); restart the lab`);
    if (!this.insert) return;
    if (!this.inTxn) {
      this.db!.exec('BEGIN');
      this.inTxn = true;
    }
    this.insert.run(rev, bucket, key, deleted, json);
    this.writesSinceCompact++;
    this.writesSinceCheckpoint++;
  }

  private queue(ev: StoreEvent): StoreEvent {
    this.pending.push(ev);
    if (!this.commitScheduled) {
      this.commitScheduled = true;
      setImmediate(() => this.commit());
    }
    return ev;
  }

  /**
   * Makes the writes so far durable (one COMMIT for all writes of the turn) and then delivers their watch events.
   * Runs at the end of each event-loop turn with writes; the HTTP layer calls it before answering, so a write is
   * acknowledged only once it is in the log. Throws when the commit fails (the writes are then not acknowledged).
   */
  commit(): void {
    this.commitScheduled = false;
    if (this.inTxn) {
      try {
        this.db!.exec('COMMIT');
      } catch (e) {
        this.failed = e as Error;
        throw e;
      } finally {
        this.inTxn = false;
      }
    }
    const evs = this.pending;
    this.pending = [];
    for (const ev of evs) this.emit(ev);
    if (this.writesSinceCompact >= 1000 || this.writesSinceCheckpoint >= CHECKPOINT_ROWS) this.scheduleMaintenance();
  }

  /**
   * Compaction and WAL checkpoints run in a later event-loop turn, after this turn's watch events and responses are
   * out: a checkpoint syncs the database file (5-15 ms here), and SQLite's automatic checkpoint ran it inside a
   * COMMIT, so the write that crossed 1,000 WAL pages and its watch events waited for it.
   */
  private scheduleMaintenance(): void {
    if (this.maintenanceScheduled) return;
    this.maintenanceScheduled = true;
    setImmediate(() => {
      this.maintenanceScheduled = false;
      if (!this.db?.isOpen || this.inTxn) return;
      try {
        if (this.writesSinceCompact >= 1000) {
          this.writesSinceCompact = 0;
          this.compactLog();
        }
        if (this.writesSinceCheckpoint >= CHECKPOINT_ROWS) {
          this.writesSinceCheckpoint = 0;
          this.db.exec('PRAGMA wal_checkpoint(PASSIVE)');
        }
      } catch (e) {
        // Both are retried at the next threshold; the log itself is intact (each ran in its own transaction).
        process.emitWarning(`store maintenance failed: ${(e as Error).message}`);
      }
    });
  }

  private emit(ev: StoreEvent): StoreEvent {
    const now = this.now();
    this.history.push(ev);
    this.historyAt.push(now);
    this.trimHistory(now);
    const ls = this.listeners.get(ev.bucket);
    if (ls) for (const l of ls) l(ev);
    const all = this.listeners.get('*');
    if (all) for (const l of all) l(ev);
    return ev;
  }

  /**
   * Drops events beyond `historySize`, and those older than the window beyond the latest HISTORY_FLOOR. Each event
   * holds its object and the one it replaced (and their JSON), so a history trimmed by count alone grew for days in a
   * lab with a Node status write every 20 s (10,000 events: ~55 h, ~100 MB).
   */
  private trimHistory(now: number): void {
    const h = this.history;
    let dropped = false;
    while (
      h.length - this.historyStart > this.historySize ||
      (h.length - this.historyStart > HISTORY_FLOOR && now - this.historyAt[this.historyStart] > this.historyWindowMs)
    ) {
      // Watches from the dropped event's revision on still see every later event.
      this.oldestResumable = h[this.historyStart].rev;
      // Free the event now; the array itself is compacted below, now and then.
      h[this.historyStart] = undefined as unknown as StoreEvent;
      this.historyStart++;
      dropped = true;
    }
    // Amortised compaction of the arrays.
    if (dropped && this.historyStart > Math.min(this.historySize, 1024)) {
      this.history = h.slice(this.historyStart);
      this.historyAt = this.historyAt.slice(this.historyStart);
      this.historyStart = 0;
    }
  }

  /** Events of `bucket` (or all, with '*') after revision `rev`, or 'expired' when history no longer has them. */
  since(bucket: string, rev: number): StoreEvent[] | 'expired' {
    if (rev < this.oldestResumable) return 'expired';
    const out: StoreEvent[] = [];
    const h = this.history;
    // Binary search the first event with ev.rev > rev.
    let lo = this.historyStart;
    let hi = h.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (h[mid].rev <= rev) lo = mid + 1;
      else hi = mid;
    }
    for (let i = lo; i < h.length; i++) if (bucket === '*' || h[i].bucket === bucket) out.push(h[i]);
    return out;
  }

  subscribe(bucket: string, fn: (ev: StoreEvent) => void): () => void {
    let s = this.listeners.get(bucket);
    if (!s) {
      s = new Set();
      this.listeners.set(bucket, s);
    }
    s.add(fn);
    return () => s.delete(fn);
  }

  /** Drops log rows older than `keepRevisions` that a later write replaced (and old tombstones). */
  compactLog(): void {
    if (!this.db || !this.deleteRow) return;
    const cutoff = this.rev - this.keepRevisions;
    if (cutoff <= 0) return;
    const drop = this.superseded.filter((r) => r <= cutoff);
    if (!drop.length) return;
    this.superseded = this.superseded.filter((r) => r > cutoff);
    this.db.exec('BEGIN');
    try {
      for (const r of drop) this.deleteRow.run(r);
      this.db.prepare("INSERT OR REPLACE INTO meta (k, v) VALUES ('compactedRev', ?)").run(String(this.rev));
      this.db.exec('COMMIT');
    } catch (e) {
      this.db.exec('ROLLBACK');
      throw e;
    }
  }

  /** Rows in the durable log (for tests and the benchmark). */
  logRows(): number {
    if (!this.db) return 0;
    return (this.db.prepare('SELECT COUNT(*) AS n FROM log').get() as { n: number }).n;
  }

  close(): void {
    try {
      this.commit();
    } catch {}
    this.listeners.clear();
    if (this.db?.isOpen) this.db.close();
  }
}

/** Log rows between WAL checkpoints (about SQLite's default of 1,000 pages for ~1-KB objects). */
const CHECKPOINT_ROWS = 1000;

interface Row {
  rev: number;
  bucket: string;
  key: string;
  deleted: number;
  value: string;
}

function lowerBound(a: string[], x: string): number {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (a[mid] < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
