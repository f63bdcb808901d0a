// watch (k8s.io/apiserver endpoints/handlers/watch.go): newline-delimited JSON events over a chunked response, from
// a resourceVersion (resumed from the store's history, or 410 Expired as an ERROR event when it is older), with
// selector transitions (an object that stops matching is DELETED for the watcher), BOOKMARK events, Table and
// PartialObjectMetadata forms, and keep-alive newlines so idle watches stay open through clients' inactivity timers
// (client-node 2.0.1 aborts a watch after 30 s without bytes).
import type { ServerResponse } from 'node:http';
import type { Core } from '../core.ts';
import { errors } from '../errors.ts';
import { gv, type ResourceType } from '../resources.ts';
import type { K8sObject, StoreEvent } from '../store.ts';
import { boolParam } from './response.ts';
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
function chunk(line: string | Buffer): Buffer {
  const body = typeof line === 'string' ? Buffer.from(line) : line;
  return Buffer.concat([Buffer.from(`${body.length.toString(16)}\r\n`), body, CRLF]);
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

  const rvParam = opts.resourceVersion ?? '';
  let startRev: number;
  let initial: K8sObject[] = [];
  let history: StoreEvent[] = [];
  const sendInitial = opts.sendInitialEvents ?? (rvParam === '' || rvParam === '0');
  if (rvParam !== '' && rvParam !== '0') {
    const rv = Number(rvParam);
    if (!Number.isInteger(rv) || rv < 0) throw errors.badRequest(`invalid resource version: ${rvParam}`);
    const h = core.store.since(rt.bucket, rv);
    res.writeHead(200, {
      'Content-Type': 'application/json',
      'Transfer-Encoding': 'chunked',
      'Cache-Control': 'no-cache',
    });
    if (h === 'expired') {
      const st = errors.expired(rv, core.store.oldestRevision() + 1).toStatus();
      res.end(`${JSON.stringify({ type: 'ERROR', object: st })}\n`);
      opts.onEnd?.();
      return;
    }
    history = h;
    startRev = rv;
  } else {
    res.writeHead(200, {
      'Content-Type': 'application/json',
      'Transfer-Encoding': 'chunked',
      'Cache-Control': 'no-cache',
    });
    startRev = core.store.revision();
  }
  // Headers go out now: client-go waits for them before it treats the watch as established.
  res.flushHeaders();
  if (sendInitial && (rvParam === '' || rvParam === '0' || opts.sendInitialEvents)) {
    initial = core.store.list(rt.bucket, ns).filter(matches);
  }

  let firstTable = true;
  let lastRev = startRev;
  // Chunks go straight to the socket once the headers are out (flushHeaders above). Node's response writes the final
  // zero-length chunk on end(). Should Node not chunk this response (no explicit Transfer-Encoding), plain writes.
  const socket = (res as ServerResponse & { chunkedEncoding?: boolean }).chunkedEncoding ? res.socket : null;
  const writeChunk = (c: Buffer) => {
    if (res.destroyed || res.writableEnded) return;
    if (socket && !socket.destroyed) socket.write(c);
    else res.write(c.subarray(c.indexOf(CRLF) + 2, c.length - 2));
    // A watcher that cannot keep up is closed, as Kubernetes does; it re-lists.
    if ((socket?.writableLength ?? res.writableLength) > 32 * 1024 * 1024) finish();
  };
  const write = (s: string) => writeChunk(chunk(s));
  const send = (type: string, obj: K8sObject) => {
    if (opts.as === 'Table') {
      const t: Record<string, unknown> = {
        kind: 'Table',
        apiVersion: 'meta.k8s.io/v1',
        metadata: { resourceVersion: obj.metadata.resourceVersion },
        columnDefinitions: firstTable ? tables.columns(rt) : [],
        rows: [tables.row(rt, obj, opts.includeObject ?? 'Metadata')],
      };
      firstTable = false;
      write(`${JSON.stringify({ type, object: t })}\n`);
    } else if (opts.as === 'PartialObjectMetadata') {
      write(
        `${JSON.stringify({ type, object: { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: obj.metadata } })}\n`,
      );
    } else {
      writeChunk(eventChunk(type, obj, rt, core));
    }
  };
  const bookmark = (rev: number, initialEnd = false) => {
    const meta: Record<string, unknown> = { resourceVersion: String(rev) };
    if (initialEnd) meta.annotations = { 'k8s.io/initial-events-end': 'true' };
    write(`${JSON.stringify({ type: 'BOOKMARK', object: { kind: rt.kind, apiVersion: gv(rt), metadata: meta } })}\n`);
  };

  const onEvent = (ev: StoreEvent) => {
    if (ev.rev <= lastRev) return;
    lastRev = ev.rev;
    const now = matches(ev.obj);
    if (ev.type === 'DELETED') {
      if (matches(ev.prev ?? ev.obj)) send('DELETED', ev.obj);
      return;
    }
    if (ev.type === 'ADDED') {
      if (now) send('ADDED', ev.obj);
      return;
    }
    const before = ev.prev ? matches(ev.prev) : now;
    if (now && before) send('MODIFIED', ev.obj);
    else if (now && !before) send('ADDED', ev.obj);
    else if (!now && before) send('DELETED', ev.obj);
  };

  for (const o of initial) send('ADDED', o);
  if (opts.sendInitialEvents && opts.allowBookmarks) bookmark(startRev, true);
  for (const ev of history) onEvent(ev);
  // Not revision(): a write of this turn is neither in the history above nor delivered yet, and its event, which
  // comes with the commit, must not be taken for one already sent (an informer watching from its list's
  // resourceVersion lost a Service created that way, and the route status waited for an unrelated change).
  lastRev = Math.max(lastRev, core.store.committedRevision());
  const unsubscribe = core.store.subscribe(rt.bucket, onEvent);
  const keepAlive = setInterval(() => writeChunk(KEEPALIVE), opts.keepAliveMs);
  const bookmarks = opts.allowBookmarks
    ? setInterval(() => bookmark(core.store.committedRevision()), opts.bookmarkMs)
    : undefined;
  let timeout: NodeJS.Timeout | undefined;
  let done = false;
  function finish() {
    if (done) return;
    done = true;
    unsubscribe();
    clearInterval(keepAlive);
    if (bookmarks) clearInterval(bookmarks);
    if (timeout) clearTimeout(timeout);
    if (!res.writableEnded) res.end();
    opts.onEnd?.();
  }
  if (opts.timeoutSeconds && opts.timeoutSeconds > 0) {
    timeout = setTimeout(() => {
      if (opts.allowBookmarks) bookmark(core.store.committedRevision());
      finish();
    }, opts.timeoutSeconds * 1000);
  }
  res.on('close', finish);
  opts.active.add(finish);
  res.on('close', () => opts.active.delete(finish));
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
