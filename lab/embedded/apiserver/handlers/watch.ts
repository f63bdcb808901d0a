// watch (k8s.io/apiserver endpoints/handlers/watch.go): newline-delimited JSON events over a chunked response, from
// a resourceVersion (resumed from the store's history, or 410 Expired as an ERROR event when it is older), with
// selector transitions (an object that stops matching is DELETED for the watcher), BOOKMARK events, Table and
// PartialObjectMetadata forms, and keep-alive newlines so idle watches stay open through clients' inactivity timers
// (client-node 2.0.1 aborts a watch after 30 s without bytes).
import type { ServerResponse } from 'node:http';
import type { Core } from '../core.ts';
import { errors } from '../errors.ts';
import { boolParam } from '../request-info.ts';
import { gv, type ResourceType } from '../resources.ts';
import type { K8sObject, StoreEvent } from '../store.ts';
import type { RequestScope, TableRenderer } from './scope.ts';

export interface WatchOptions {
  namespace?: string;
  name?: string;
  resourceVersion?: string | null;
  labelSelector?: string | null;
  fieldSelector?: string | null;
  allowBookmarks: boolean;
  sendInitialEvents?: boolean;
  timeoutSeconds?: number;
  /** Table | PartialObjectMetadata | undefined (full objects). */
  as?: 'Table' | 'PartialObjectMetadata';
  includeObject?: string;
  keepAliveMs: number;
  bookmarkMs: number;
  /** Called when the watch ends (for the request log). */
  onEnd?: () => void;
  /** The server's set of open watches (ended on stop). */
  active: Set<() => void>;
}

const serialized = new WeakMap<object, Map<string, Buffer>>();

/**
 * One HTTP/1.1 chunk (`<hex length>\r\n<line>\r\n`). Watch events are written to the socket as ready-made chunks:
 * the frame of an event is built once and shared by every watcher, so fan-out is one socket write per watcher, with
 * no per-watcher framing and no wait for Node's corked write (flushed on the next tick, after every other watcher's
 * write and the rest of the turn).
 */
export function chunk(line: string | Buffer): Buffer {
  const body = typeof line === 'string' ? Buffer.from(line) : line;
  const head = `${body.length.toString(16)}\r\n`;
  // Its own exact-size memory, not a slice of Buffer's shared pool: the chunk lives as long as its event stays in the
  // watch history, and a 4 KB slice kept that long pins the pool's whole 64 KiB slab (Node 24's Buffer.poolSize):
  // 65 KB per Node status event, the lab process's steady growth in a 2 h soak.
  const out = Buffer.allocUnsafeSlow(head.length + body.length + CRLF.length);
  out.write(head, 0, 'latin1');
  body.copy(out, head.length);
  CRLF.copy(out, head.length + body.length);
  return out;
}
const CRLF = Buffer.from('\r\n');
const KEEPALIVE = chunk('\n');

/** Encodes an event once per version as a chunk, shared by every watcher (fan-out cost is one socket write each). */
function eventChunk(type: string, obj: K8sObject, rt: ResourceType, core: Core): Buffer {
  let m = serialized.get(obj);
  if (!m) {
    m = new Map();
    serialized.set(obj, m);
  }
  const k = `${type}|${gv(rt)}`;
  let s = m.get(k);
  if (!s) {
    s = chunk(`{"type":"${type}","object":${core.store.json(core.present(rt, obj))}}\n`);
    m.set(k, s);
  }
  return s;
}

export function serveWatch(
  core: Core,
  rt: ResourceType,
  res: ServerResponse,
  opts: WatchOptions,
  tables: TableRenderer,
): void {
  const sel = core.selectors(rt, { labelSelector: opts.labelSelector, fieldSelector: opts.fieldSelector });
  const ns = rt.namespaced ? opts.namespace : undefined;
  const inScope = (o: K8sObject) =>
    (!ns || o.metadata.namespace === ns) && (!opts.name || o.metadata.name === opts.name);
  const matches = (o: K8sObject | undefined) => !!o && inScope(o) && core.matches(rt, o, sel);
  const from = startingPoint(core, rt, res, opts);
  if (!from) return;
  // Headers go out now: client-go waits for them before it treats the watch as established.
  res.flushHeaders();
  const rvParam = opts.resourceVersion ?? '';
  const sendInitial = opts.sendInitialEvents ?? (rvParam === '' || rvParam === '0');
  const initial =
    sendInitial && (rvParam === '' || rvParam === '0' || opts.sendInitialEvents)
      ? core.store.list(rt.bucket, ns).filter(matches)
      : [];
  new WatchStream(core, rt, res, opts, tables, matches, from.startRev).run(initial, from.history);
}

/**
 * Where the watch starts: the revision given (with the store's history since then) or the current one; writes the
 * response headers. A revision older than the history ends the watch with a 410 Expired ERROR event (undefined).
 */
function startingPoint(
  core: Core,
  rt: ResourceType,
  res: ServerResponse,
  opts: WatchOptions,
): { startRev: number; history: StoreEvent[] } | undefined {
  const rvParam = opts.resourceVersion ?? '';
  const headers = { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked', 'Cache-Control': 'no-cache' };
  if (rvParam === '' || rvParam === '0') {
    res.writeHead(200, headers);
    return { startRev: core.store.revision(), history: [] };
  }
  const rv = Number(rvParam);
  if (!Number.isInteger(rv) || rv < 0) throw errors.badRequest(`invalid resource version: ${rvParam}`);
  const h = core.store.since(rt.bucket, rv);
  res.writeHead(200, headers);
  if (h === 'expired') {
    const st = errors.expired(rv, core.store.oldestRevision() + 1).toStatus();
    res.end(`${JSON.stringify({ type: 'ERROR', object: st })}\n`);
    opts.onEnd?.();
    return undefined;
  }
  return { startRev: rv, history: h };
}

/** One open watch: its events, bookmarks and keep-alives on the response, until the client, a timeout or stop ends it. */
class WatchStream {
  private readonly core: Core;
  private readonly rt: ResourceType;
  private readonly res: ServerResponse;
  private readonly opts: WatchOptions;
  private readonly tables: TableRenderer;
  private readonly matches: (o: K8sObject | undefined) => boolean;
  private readonly startRev: number;
  private lastRev: number;
  private firstTable = true;
  /** Chunks go straight to the socket once the headers are out (Node writes the final zero-length chunk on end()).
   * Should Node not chunk this response (no explicit Transfer-Encoding), plain writes. */
  private readonly socket: ServerResponse['socket'];
  private unsubscribe?: () => void;
  private keepAlive?: NodeJS.Timeout;
  private bookmarks?: NodeJS.Timeout;
  private timeout?: NodeJS.Timeout;
  private done = false;

  constructor(
    core: Core,
    rt: ResourceType,
    res: ServerResponse,
    opts: WatchOptions,
    tables: TableRenderer,
    matches: (o: K8sObject | undefined) => boolean,
    startRev: number,
  ) {
    this.core = core;
    this.rt = rt;
    this.res = res;
    this.opts = opts;
    this.tables = tables;
    this.matches = matches;
    this.startRev = startRev;
    this.lastRev = startRev;
    this.socket = (res as ServerResponse & { chunkedEncoding?: boolean }).chunkedEncoding ? res.socket : null;
  }

  run(initial: K8sObject[], history: StoreEvent[]): void {
    const { core, opts, res } = this;
    for (const o of initial) this.send('ADDED', o);
    if (opts.sendInitialEvents && opts.allowBookmarks) this.bookmark(this.startRev, true);
    for (const ev of history) this.onEvent(ev);
    if (this.done) return;
    // Not revision(): a write of this turn is neither in the history above nor delivered yet, and its event, which
    // comes with the commit, must not be taken for one already sent (an informer watching from its list's
    // resourceVersion lost a Service created that way, and the route status waited for an unrelated change).
    this.lastRev = Math.max(this.lastRev, core.store.committedRevision());
    this.unsubscribe = core.store.subscribe(this.rt.bucket, (ev) => this.onEvent(ev));
    this.keepAlive = setInterval(() => this.writeChunk(KEEPALIVE), opts.keepAliveMs);
    if (opts.allowBookmarks)
      this.bookmarks = setInterval(() => this.bookmark(core.store.committedRevision()), opts.bookmarkMs);
    if (opts.timeoutSeconds && opts.timeoutSeconds > 0) {
      this.timeout = setTimeout(() => {
        if (opts.allowBookmarks) this.bookmark(core.store.committedRevision());
        this.finish();
      }, opts.timeoutSeconds * 1000);
    }
    const finish = () => this.finish();
    res.on('close', finish);
    opts.active.add(finish);
    res.on('close', () => opts.active.delete(finish));
  }

  private writeChunk(c: Buffer): void {
    const { res, socket } = this;
    if (res.destroyed || res.writableEnded) return;
    if (socket && !socket.destroyed) socket.write(c);
    else res.write(c.subarray(c.indexOf(CRLF) + 2, c.length - 2));
    // A watcher that cannot keep up is closed, as Kubernetes does; it re-lists.
    if ((socket?.writableLength ?? res.writableLength) > 32 * 1024 * 1024) this.finish();
  }

  private write(s: string): void {
    this.writeChunk(chunk(s));
  }

  private send(type: string, obj: K8sObject): void {
    const { opts, rt, tables } = this;
    if (opts.as === 'Table') {
      const t: Record<string, unknown> = {
        kind: 'Table',
        apiVersion: 'meta.k8s.io/v1',
        metadata: { resourceVersion: obj.metadata.resourceVersion },
        columnDefinitions: this.firstTable ? tables.columns(rt) : [],
        rows: [tables.row(rt, obj, opts.includeObject ?? 'Metadata')],
      };
      this.firstTable = false;
      this.write(`${JSON.stringify({ type, object: t })}\n`);
    } else if (opts.as === 'PartialObjectMetadata') {
      this.write(
        `${JSON.stringify({ type, object: { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: obj.metadata } })}\n`,
      );
    } else {
      this.writeChunk(eventChunk(type, obj, rt, this.core));
    }
  }

  private bookmark(rev: number, initialEnd = false): void {
    const meta: Record<string, unknown> = { resourceVersion: String(rev) };
    if (initialEnd) meta.annotations = { 'k8s.io/initial-events-end': 'true' };
    const rt = this.rt;
    this.write(
      `${JSON.stringify({ type: 'BOOKMARK', object: { kind: rt.kind, apiVersion: gv(rt), metadata: meta } })}\n`,
    );
  }

  /** A store event as the watcher sees it: selector transitions become ADDED or DELETED. */
  private onEvent(ev: StoreEvent): void {
    if (ev.rev <= this.lastRev) return;
    this.lastRev = ev.rev;
    const now = this.matches(ev.obj);
    if (ev.type === 'DELETED') {
      if (this.matches(ev.prev ?? ev.obj)) this.send('DELETED', ev.obj);
      return;
    }
    if (ev.type === 'ADDED') {
      if (now) this.send('ADDED', ev.obj);
      return;
    }
    const before = ev.prev ? this.matches(ev.prev) : now;
    if (now && before) this.send('MODIFIED', ev.obj);
    else if (now && !before) this.send('ADDED', ev.obj);
    else if (!now && before) this.send('DELETED', ev.obj);
  }

  private finish(): void {
    if (this.done) return;
    this.done = true;
    this.unsubscribe?.();
    clearInterval(this.keepAlive);
    if (this.bookmarks) clearInterval(this.bookmarks);
    if (this.timeout) clearTimeout(this.timeout);
    if (!this.res.writableEnded) this.res.end();
    this.opts.onEnd?.();
  }
}

/** A watch request: its options from the query and the negotiated form; the response streams until it ends. */
export function watch(s: RequestScope): true {
  const { q, neg } = s;
  s.rec.code = 200;
  const lo: WatchOptions = {
    namespace: s.ns,
    name: s.info.name,
    resourceVersion: q.get('resourceVersion'),
    labelSelector: q.get('labelSelector'),
    fieldSelector: q.get('fieldSelector'),
    allowBookmarks: boolParam(q, 'allowWatchBookmarks'),
    sendInitialEvents: q.has('sendInitialEvents') ? boolParam(q, 'sendInitialEvents') : undefined,
    timeoutSeconds: q.has('timeoutSeconds') ? Number(q.get('timeoutSeconds')) : undefined,
    as: neg.as === 'Table' ? 'Table' : neg.as?.startsWith('Partial') ? 'PartialObjectMetadata' : undefined,
    includeObject: q.get('includeObject') ?? undefined,
    keepAliveMs: s.cfg.keepAliveMs,
    bookmarkMs: s.cfg.bookmarkMs,
    onEnd: () => s.finishAudit(),
    active: s.activeWatches,
  };
  s.finishAudit('ResponseStarted');
  serveWatch(s.core, s.rt, s.res, lo, s.tables);
  return true;
}
