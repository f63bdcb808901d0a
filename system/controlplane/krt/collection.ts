// krt-style collections (after Istio's krt): inputs fed by informers, and derived collections declared as a function
// of one item of a parent collection plus whatever the function fetches from other collections. Every fetch is
// recorded as a dependency of that item, so a change recomputes only the items that read what changed, and an output
// equal to the previous one stops the propagation. Work is batched: changes mark items dirty and `flush()` recomputes
// them collection by collection in creation order (a collection can only depend on ones created before it).
import { isDeepStrictEqual } from 'node:util';

export interface Event<T> {
  key: string;
  old?: T;
  new?: T;
}

export type Handler<T> = (events: Event<T>[]) => void;

export interface Collection<T> {
  readonly name: string;
  readonly id: number;
  get(key: string): T | undefined;
  list(): T[];
  keys(): string[];
  size(): number;
  /** True when its inputs have listed everything once and no recomputation is pending. */
  synced(): boolean;
  /** Called with every batch of changes of this collection (during flush). Returns an unsubscribe function. */
  subscribe(handler: Handler<T>): () => void;
  /** A secondary index: each item maps to zero or more index keys. */
  index(name: string, fn: (item: T) => string[]): Index<T>;
  dump(): CollectionDump;
}

export interface Index<T> {
  readonly name: string;
  readonly collection: Collection<T>;
  lookup(indexKey: string): T[];
  keysOf(item: T): string[];
}

export interface CollectionDump {
  name: string;
  state: {
    outputs: Record<string, unknown>;
    inputs?: Record<string, { outputs: string[]; dependencies: string[]; error?: string }>;
    synced: boolean;
  };
  stats: { recomputations: number; events: number };
}

/** What a derived collection's function may read; every read becomes a dependency of the item being computed. */
export interface Ctx {
  fetch<T>(c: Collection<T>, key: string): T | undefined;
  fetchIndex<T>(i: Index<T>, indexKey: string): T[];
  fetchAll<T>(c: Collection<T>): T[];
}

interface Recorded {
  keys: Map<number, Set<string>>;
  indexes: Map<Index<unknown>, Set<string>>;
  all: Set<number>;
}

let nextId = 1;

/** The scheduler all collections of one control plane share. */
export class Runtime {
  private readonly collections: BaseCollection<any>[] = [];
  private scheduled = false;
  private flushing = false;
  private running: boolean;
  private readonly schedule: (fn: () => void) => void;
  flushes = 0;

  /** Told when an item's function throws; the item keeps its previous outputs. Default: rethrow. */
  readonly onError: (collection: string, key: string, err: unknown) => void;
  errors = 0;

  constructor(
    opts: {
      autoFlush?: boolean;
      start?: boolean;
      schedule?: (fn: () => void) => void;
      onError?: (collection: string, key: string, err: unknown) => void;
    } = {},
  ) {
    this.running = opts.start ?? true;
    this.schedule = opts.autoFlush === false ? () => {} : (opts.schedule ?? ((fn) => setImmediate(fn)));
    this.onError =
      opts.onError ??
      ((_c, _k, err) => {
        throw err;
      });
  }

  register(c: BaseCollection<any>): void {
    this.collections.push(c);
  }

  all(): Collection<unknown>[] {
    return [...this.collections];
  }

  /** Derived collections compute nothing until started, so an initial list of every input is translated once. */
  start(): void {
    this.running = true;
    this.requestFlush();
  }

  isRunning(): boolean {
    return this.running;
  }

  requestFlush(): void {
    if (this.scheduled || !this.running) return;
    this.scheduled = true;
    this.schedule(() => {
      this.scheduled = false;
      this.flush();
    });
  }

  /** Processes every pending change through the collections, in order. Returns the number of recomputations. */
  flush(): number {
    if (!this.running || this.flushing) return 0;
    this.flushing = true;
    let n = 0;
    try {
      for (const c of this.collections) n += c.process();
      this.flushes++;
    } finally {
      this.flushing = false;
    }
    return n;
  }

  dump(): CollectionDump[] {
    return this.collections.map((c) => c.dump());
  }
}

abstract class BaseCollection<T> implements Collection<T> {
  readonly id = nextId++;
  protected readonly items = new Map<string, T>();
  private readonly handlers = new Set<Handler<T>>();
  private readonly indexes: IndexImpl<T>[] = [];
  protected pending: Event<T>[] = [];
  recomputations = 0;
  eventCount = 0;
  readonly runtime: Runtime;
  readonly name: string;
  protected readonly redact?: (item: T) => unknown;

  constructor(runtime: Runtime, name: string, redact?: (item: T) => unknown) {
    this.runtime = runtime;
    this.name = name;
    this.redact = redact;
    runtime.register(this);
  }

  get(key: string): T | undefined {
    return this.items.get(key);
  }
  list(): T[] {
    return [...this.items.values()];
  }
  keys(): string[] {
    return [...this.items.keys()];
  }
  size(): number {
    return this.items.size;
  }
  abstract synced(): boolean;
  abstract process(): number;

  subscribe(handler: Handler<T>): () => void {
    this.handlers.add(handler);
    return () => this.handlers.delete(handler);
  }

  index(name: string, fn: (item: T) => string[]): Index<T> {
    const idx = new IndexImpl<T>(name, this, fn);
    for (const [k, v] of this.items) idx.add(k, v);
    this.indexes.push(idx);
    return idx;
  }

  /** Applies a change to the items and indexes, and queues the event for the subscribers. */
  protected set(key: string, value: T | undefined): boolean {
    const old = this.items.get(key);
    if (value === undefined) {
      if (old === undefined) return false;
      this.items.delete(key);
    } else {
      if (old !== undefined && isDeepStrictEqual(old, value)) return false;
      this.items.set(key, value);
    }
    for (const i of this.indexes) {
      if (old !== undefined) i.remove(key, old);
      if (value !== undefined) i.add(key, value);
    }
    this.pending.push({ key, old, new: value });
    return true;
  }

  /** Delivers queued events to subscribers (dependents mark their items dirty). */
  protected emit(): void {
    if (!this.pending.length) return;
    const events = this.pending;
    this.pending = [];
    this.eventCount += events.length;
    for (const h of this.handlers) h(events);
  }

  protected outputsDump(): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const k of [...this.items.keys()].sort()) {
      const v = this.items.get(k)!;
      out[k] = this.redact ? this.redact(v) : v;
    }
    return out;
  }

  dump(): CollectionDump {
    return {
      name: this.name,
      state: { outputs: this.outputsDump(), synced: this.synced() },
      stats: { recomputations: this.recomputations, events: this.eventCount },
    };
  }
}

class IndexImpl<T> implements Index<T> {
  private readonly byKey = new Map<string, Map<string, T>>();
  readonly name: string;
  readonly collection: Collection<T>;
  private readonly fn: (item: T) => string[];
  constructor(name: string, collection: Collection<T>, fn: (item: T) => string[]) {
    this.name = name;
    this.collection = collection;
    this.fn = fn;
  }
  keysOf(item: T): string[] {
    return this.fn(item);
  }
  add(key: string, item: T): void {
    for (const ik of this.fn(item)) {
      let m = this.byKey.get(ik);
      if (!m) {
        m = new Map();
        this.byKey.set(ik, m);
      }
      m.set(key, item);
    }
  }
  remove(key: string, item: T): void {
    for (const ik of this.fn(item)) {
      const m = this.byKey.get(ik);
      m?.delete(key);
      if (m && !m.size) this.byKey.delete(ik);
    }
  }
  lookup(indexKey: string): T[] {
    const m = this.byKey.get(indexKey);
    return m ? [...m.values()] : [];
  }
}

/** A reverse dependency table: per source (a collection, an index), per key read there, the outputs that read it. */
type Dependents<S> = Map<S, Map<string, Set<string>>>;

/** Records that `dependent` read these keys of these sources. */
function link<S>(table: Dependents<S>, read: Map<S, Set<string>>, dependent: string): void {
  for (const [source, keys] of read) {
    let m = table.get(source);
    if (!m) {
      m = new Map();
      table.set(source, m);
    }
    for (const k of keys) {
      let s = m.get(k);
      if (!s) {
        s = new Set();
        m.set(k, s);
      }
      s.add(dependent);
    }
  }
}

/** Forgets what `dependent` read (link's reverse), dropping keys no output reads any more. */
function unlink<S>(table: Dependents<S>, read: Map<S, Set<string>>, dependent: string): void {
  for (const [source, keys] of read) {
    const m = table.get(source);
    for (const k of keys) {
      const s = m?.get(k);
      s?.delete(dependent);
      if (s && !s.size) m!.delete(k);
    }
  }
}

/** A collection fed from outside (an informer, or a test). */
export class InputCollection<T> extends BaseCollection<T> {
  private hasSynced = false;
  private readonly keyOf: (item: T) => string;

  constructor(runtime: Runtime, name: string, keyOf: (item: T) => string, redact?: (item: T) => unknown) {
    super(runtime, name, redact);
    this.keyOf = keyOf;
  }

  upsert(item: T): void {
    if (this.set(this.keyOf(item), item)) this.runtime.requestFlush();
  }

  delete(key: string): void {
    if (this.set(key, undefined)) this.runtime.requestFlush();
  }

  /** Replaces the whole content (an informer's relist). */
  replace(items: T[]): void {
    const seen = new Set<string>();
    for (const it of items) {
      const k = this.keyOf(it);
      seen.add(k);
      this.set(k, it);
    }
    for (const k of this.keys()) if (!seen.has(k)) this.set(k, undefined);
    this.runtime.requestFlush();
  }

  markSynced(): void {
    if (this.hasSynced) return;
    this.hasSynced = true;
    this.runtime.requestFlush();
  }

  synced(): boolean {
    return this.hasSynced && this.pending.length === 0;
  }

  process(): number {
    this.emit();
    return 0;
  }
}

export interface DeriveOptions<_P, O> {
  /** Key of each output; default: the parent's key (for single outputs). */
  keyOf?: (out: O) => string;
  redact?: (out: O) => unknown;
}

/**
 * A collection derived item by item from a parent: `fn(ctx, parent)` returns zero, one or many outputs. Reads through
 * `ctx` are the item's dependencies; it is recomputed when the parent item or anything it read changes.
 */
export class DerivedCollection<P, O> extends BaseCollection<O> {
  private readonly dirty = new Set<string>();
  /** parent key → output keys */
  private readonly outputsOf = new Map<string, string[]>();
  /** parent key → what it read */
  private readonly deps = new Map<string, Recorded>();
  /** reverse indexes: collection id → item key → parent keys; index → index key → parent keys; collection id → parents */
  private readonly byKey: Dependents<number> = new Map();
  private readonly byIndex: Dependents<Index<unknown>> = new Map();
  private readonly byAll = new Map<number, Set<string>>();
  private readonly watched = new Map<number, { c: Collection<unknown>; indexes: Set<Index<unknown>> }>();
  private readonly keyOf?: (out: O) => string;
  /** parent key → the error its last computation threw */
  private readonly failed = new Map<string, string>();
  private readonly parent: Collection<P>;
  private readonly fn: (ctx: Ctx, item: P, parentKey: string) => O | O[] | undefined;

  constructor(
    runtime: Runtime,
    name: string,
    parent: Collection<P>,
    fn: (ctx: Ctx, item: P, parentKey: string) => O | O[] | undefined,
    opts: DeriveOptions<P, O> = {},
  ) {
    super(runtime, name, opts.redact);
    this.parent = parent;
    this.fn = fn;
    this.keyOf = opts.keyOf;
    for (const k of parent.keys()) this.dirty.add(k);
    parent.subscribe((events) => {
      for (const e of events) this.dirty.add(e.key);
    });
  }

  synced(): boolean {
    if (!this.parent.synced() || this.dirty.size > 0 || this.pending.length || !this.runtime.isRunning()) return false;
    for (const { c } of this.watched.values()) if (!c.synced()) return false;
    return true;
  }

  /** Marks the parents that read something that changed. */
  private onDependency(cid: number, events: Event<unknown>[]): void {
    const w = this.watched.get(cid)!;
    const keyDeps = this.byKey.get(cid);
    const allDeps = this.byAll.get(cid);
    if (allDeps?.size) for (const p of allDeps) this.dirty.add(p);
    for (const e of events) {
      const ps = keyDeps?.get(e.key);
      if (ps) for (const p of ps) this.dirty.add(p);
      for (const idx of w.indexes) {
        const m = this.byIndex.get(idx);
        if (!m?.size) continue;
        const iks = new Set<string>();
        if (e.old !== undefined) for (const k of idx.keysOf(e.old)) iks.add(k);
        if (e.new !== undefined) for (const k of idx.keysOf(e.new)) iks.add(k);
        for (const ik of iks) {
          const qs = m.get(ik);
          if (qs) for (const p of qs) this.dirty.add(p);
        }
      }
    }
  }

  private watch(c: Collection<unknown>): { c: Collection<unknown>; indexes: Set<Index<unknown>> } {
    let w = this.watched.get(c.id);
    if (!w) {
      if (c.id >= this.id) throw new Error(`krt: ${this.name} cannot depend on ${c.name}, which was created after it`);
      w = { c, indexes: new Set() };
      this.watched.set(c.id, w);
      c.subscribe((events) => this.onDependency(c.id, events as Event<unknown>[]));
    }
    return w;
  }

  private clearDeps(parentKey: string): void {
    const r = this.deps.get(parentKey);
    if (!r) return;
    unlink(this.byKey, r.keys, parentKey);
    unlink(this.byIndex, r.indexes, parentKey);
    for (const cid of r.all) this.byAll.get(cid)?.delete(parentKey);
    this.deps.delete(parentKey);
  }

  private recordDeps(parentKey: string, r: Recorded): void {
    this.deps.set(parentKey, r);
    link(this.byKey, r.keys, parentKey);
    link(this.byIndex, r.indexes, parentKey);
    for (const cid of r.all) {
      let s = this.byAll.get(cid);
      if (!s) {
        s = new Set();
        this.byAll.set(cid, s);
      }
      s.add(parentKey);
    }
  }

  private compute(parentKey: string): void {
    this.clearDeps(parentKey);
    const item = this.parent.get(parentKey);
    let outs: O[] = [];
    if (item !== undefined) {
      const r: Recorded = { keys: new Map(), indexes: new Map(), all: new Set() };
      const ctx: Ctx = {
        fetch: (c, key) => {
          this.watch(c as Collection<unknown>);
          let s = r.keys.get(c.id);
          if (!s) {
            s = new Set();
            r.keys.set(c.id, s);
          }
          s.add(key);
          return c.get(key);
        },
        fetchIndex: (i, ik) => {
          this.watch(i.collection as Collection<unknown>).indexes.add(i as Index<unknown>);
          let s = r.indexes.get(i as Index<unknown>);
          if (!s) {
            s = new Set();
            r.indexes.set(i as Index<unknown>, s);
          }
          s.add(ik);
          return i.lookup(ik);
        },
        fetchAll: (c) => {
          this.watch(c as Collection<unknown>);
          r.all.add(c.id);
          return c.list();
        },
      };
      this.recomputations++;
      let res: O | O[] | undefined;
      try {
        res = this.fn(ctx, item, parentKey);
      } catch (err) {
        // A bug or an input nobody expected must not stop the others: keep what this item had, and say so.
        this.recordDeps(parentKey, r);
        this.failed.set(parentKey, String((err as Error)?.message ?? err));
        this.runtime.errors++;
        this.runtime.onError(this.name, parentKey, err);
        return;
      }
      this.failed.delete(parentKey);
      outs = res === undefined ? [] : Array.isArray(res) ? res : [res];
      this.recordDeps(parentKey, r);
    }
    const newKeys = outs.map((o) => (this.keyOf ? this.keyOf(o) : parentKey));
    const oldKeys = this.outputsOf.get(parentKey) ?? [];
    const keep = new Set(newKeys);
    for (const k of oldKeys) if (!keep.has(k)) this.set(k, undefined);
    for (let i = 0; i < outs.length; i++) this.set(newKeys[i], outs[i]);
    if (newKeys.length) this.outputsOf.set(parentKey, newKeys);
    else this.outputsOf.delete(parentKey);
  }

  process(): number {
    let n = 0;
    if (this.dirty.size) {
      const keys = [...this.dirty];
      this.dirty.clear();
      for (const k of keys) {
        this.compute(k);
        n++;
      }
    }
    this.emit();
    return n;
  }

  override dump(): CollectionDump {
    const inputs: Record<string, { outputs: string[]; dependencies: string[] }> = {};
    const names = new Map<number, string>();
    for (const { c } of this.watched.values()) names.set(c.id, c.name);
    for (const k of [...this.deps.keys()].sort()) {
      const r = this.deps.get(k)!;
      const dependencies: string[] = [`${this.parent.name}/${k}`];
      for (const [cid, keys] of r.keys) for (const key of keys) dependencies.push(`${names.get(cid)}/${key}`);
      for (const [idx, iks] of r.indexes)
        for (const ik of iks) dependencies.push(`${idx.collection.name}[${idx.name}=${ik}]`);
      for (const cid of r.all) dependencies.push(`${names.get(cid)}/*`);
      const error = this.failed.get(k);
      inputs[k] = { outputs: this.outputsOf.get(k) ?? [], dependencies, ...(error ? { error } : {}) };
    }
    const d = super.dump();
    d.state.inputs = inputs;
    return d;
  }
}

/**
 * What `derived` holds for the inputs `index` finds under `indexKey`, in index order (an input it made nothing of is
 * left out): a dependency on both. `keyOf`: the inputs' key, which a derived collection's items keep by default.
 */
export function fetchDerived<T, O>(
  ctx: Ctx,
  index: Index<T>,
  indexKey: string,
  derived: Collection<O>,
  keyOf: (input: T) => string,
): O[] {
  const out: O[] = [];
  for (const input of ctx.fetchIndex(index, indexKey)) {
    const o = ctx.fetch(derived, keyOf(input));
    if (o !== undefined) out.push(o);
  }
  return out;
}

export function derive<P, O>(
  runtime: Runtime,
  name: string,
  parent: Collection<P>,
  fn: (ctx: Ctx, item: P, parentKey: string) => O | O[] | undefined,
  opts?: DeriveOptions<P, O>,
): DerivedCollection<P, O> {
  return new DerivedCollection(runtime, name, parent, fn, opts);
}
