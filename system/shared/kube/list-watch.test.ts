// The list-watch loop and informer (list-watch.ts) over a scripted source: each list and watch call takes the next
// answer of a script (a list, a stream of events, an error with an HTTP status), so the steps of client-go's
// reflector (k8s.io/client-go/tools/cache/reflector.go) are pinned one by one: list then watch from the list's
// resourceVersion with bookmarks, relist on 410 (ERROR event or HTTP answer) with vanished objects reported DELETED,
// back-off on failures, 404, stop. End to end over the embedded API server: lab/embedded/client/kube-client.test.ts.
import { describe, expect, it } from 'vitest';
import { caOnly } from '../../controlplane/kube/watched.ts';
import { LogRegistry } from '../log.ts';
import {
  Informer,
  ListWatch,
  type ListWatchSource,
  type ObjectList,
  type WatchEvent,
  type WatchEventLine,
} from './list-watch.ts';

const log = new LogRegistry({ level: 'warn', sink: (l) => process.stderr.write(`${l}\n`) }).logger('test');
const PATH = '/api/v1/configmaps';

const obj = (name: string, rv: string, namespace = 'default') => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace, uid: `uid-${name}`, resourceVersion: rv },
});
const list = (rv: string, ...items: any[]): ObjectList => ({ items, metadata: { resourceVersion: rv } });
const status = (code: number) => Object.assign(new Error(`HTTP ${code}`), { statusCode: code });

type Answer = ObjectList | Error | WatchEventLine[];

/**
 * Answers each call with the next answer of the script; once the script is used up, a call waits until aborted
 * (a watch) or forever (a list), and `drained` resolves.
 */
class ScriptedSource implements ListWatchSource {
  readonly calls: { verb: 'list' | 'watch'; params: Record<string, unknown> }[] = [];
  readonly signals: AbortSignal[] = [];
  readonly drained: Promise<void>;
  private drain!: () => void;
  private readonly script: Answer[];

  constructor(...script: Answer[]) {
    this.script = script;
    this.drained = new Promise((r) => {
      this.drain = r;
    });
  }

  private next(verb: 'list' | 'watch', params: Record<string, unknown>): Answer | undefined {
    this.calls.push({ verb, params });
    const a = this.script.shift();
    if (!a) this.drain();
    return a;
  }

  list: ListWatchSource['list'] = async (_path, params) => {
    const a = this.next('list', params);
    if (!a) return new Promise(() => {});
    if (a instanceof Error) throw a;
    if (Array.isArray(a)) throw new Error('script: a watch answer where a list was due');
    return a;
  };

  watch: ListWatchSource['watch'] = async (_path, params, onEvent, signal) => {
    this.signals.push(signal);
    const a = this.next('watch', params);
    if (!a) return new Promise((_, reject) => signal.addEventListener('abort', () => reject(new Error('aborted'))));
    if (a instanceof Error) throw a;
    if (!Array.isArray(a)) throw new Error('script: a list answer where a watch was due');
    for (const e of a) onEvent(e);
  };
}

/** Runs a ListWatch over `source` until the script is used up; its events and errors. */
async function run(source: ScriptedSource, opts: ConstructorParameters<typeof ListWatch>[4] = {}) {
  const events: [WatchEvent, string?][] = [];
  const errors: [number | undefined, number][] = [];
  const lw = new ListWatch(source, PATH, (type, o) => events.push([type, o?.metadata.name]), log, {
    initialBackoffMs: 1,
    maxBackoffMs: 4,
    onError: (err, retryInMs) => errors.push([(err as { statusCode?: number }).statusCode, retryInMs]),
    ...opts,
  });
  const ended = lw.start();
  await source.drained;
  lw.stop();
  await ended;
  return { events, errors, lw, calls: source.calls.map((c) => [c.verb, c.params.resourceVersion]) };
}

describe('ListWatch', () => {
  it('lists, reports SYNC, then watches from the list resourceVersion with bookmarks and follows the events', async () => {
    const source = new ScriptedSource(
      list('10', obj('a', '5'), obj('b', '6')),
      [
        { type: 'ADDED', object: obj('c', '11') },
        { type: 'MODIFIED', object: obj('a', '12') },
        { type: 'BOOKMARK', object: { kind: 'ConfigMap', metadata: { resourceVersion: '15' } } },
      ],
      // The stream ended: watched again from the bookmark's resourceVersion.
      [{ type: 'DELETED', object: obj('b', '16') }],
    );
    const { events, errors, lw, calls } = await run(source, { params: { labelSelector: 'app=x' } });
    expect(events).toEqual([
      ['ADDED', 'a'],
      ['ADDED', 'b'],
      ['SYNC', undefined],
      ['ADDED', 'c'],
      ['MODIFIED', 'a'],
      ['DELETED', 'b'],
    ]);
    expect(calls).toEqual([
      ['list', undefined],
      ['watch', '10'],
      ['watch', '15'],
      ['watch', '16'],
    ]);
    expect(source.calls[0].params).toEqual({ labelSelector: 'app=x' });
    expect(source.calls[1].params).toEqual({
      labelSelector: 'app=x',
      resourceVersion: '10',
      allowWatchBookmarks: true,
    });
    expect(errors).toEqual([]);
    expect(lw.objects().map((o) => [o.metadata.name, o.metadata.resourceVersion])).toEqual([
      ['a', '12'],
      ['c', '11'],
    ]);
  });

  it("keeps and reports only what transform leaves (the control plane keeps a ConfigMap's ca.crt, nothing else)", async () => {
    const big = (name: string, rv: string) => ({
      ...obj(name, rv),
      metadata: { ...obj(name, rv).metadata, managedFields: [{ manager: 'kubectl' }], labels: { a: 'b' } },
      data: { 'ca.crt': `PEM-${rv}`, 'huge.json': 'x'.repeat(10_000) },
      binaryData: { blob: 'AAAA' },
    });
    const seen: unknown[] = [];
    const source = new ScriptedSource(list('10', big('a', '5')), [{ type: 'MODIFIED', object: big('a', '11') }]);
    const lw = new ListWatch(source, PATH, (_t, o) => o && seen.push(o), log, { transform: caOnly as any });
    const ended = lw.start();
    await source.drained;
    lw.stop();
    await ended;
    const want = (rv: string) => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'a', namespace: 'default', uid: 'uid-a', resourceVersion: rv },
      data: { 'ca.crt': `PEM-${rv}` },
    });
    expect(seen).toEqual([want('5'), want('11')]);
    expect(lw.objects()).toEqual([want('11')]);
  });

  it('relists after an ERROR 410 event, reporting what changed meanwhile and the vanished objects as DELETED', async () => {
    const source = new ScriptedSource(
      list('10', obj('keep', '1'), obj('changed', '2'), obj('gone', '3')),
      [{ type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired' } }],
      list('20', obj('keep', '1'), obj('changed', '18'), obj('new', '19')),
    );
    const { events, errors, calls } = await run(source);
    expect(events).toEqual([
      ['ADDED', 'keep'],
      ['ADDED', 'changed'],
      ['ADDED', 'gone'],
      ['SYNC', undefined],
      ['MODIFIED', 'changed'],
      ['ADDED', 'new'],
      ['DELETED', 'gone'],
      ['SYNC', undefined],
    ]);
    expect(calls).toEqual([
      ['list', undefined],
      ['watch', '10'],
      ['list', undefined],
      ['watch', '20'],
    ]);
    expect(errors).toEqual([]);
  });

  it('relists at once when the watch itself is answered 410 (HTTP), rather than watching the same version again', async () => {
    const source = new ScriptedSource(list('10', obj('a', '1')), status(410), list('30', obj('b', '29')));
    const { events, errors, calls } = await run(source);
    expect(calls).toEqual([
      ['list', undefined],
      ['watch', '10'],
      ['list', undefined],
      ['watch', '30'],
    ]);
    expect(events).toEqual([
      ['ADDED', 'a'],
      ['SYNC', undefined],
      ['ADDED', 'b'],
      ['DELETED', 'a'],
      ['SYNC', undefined],
    ]);
    expect(errors).toEqual([]);
  });

  it('backs off on failures, doubling up to the maximum, and from the start again once a list or watch went well', async () => {
    const source = new ScriptedSource(
      status(500), // the list
      list('10'),
      status(503),
      status(503),
      status(503),
      status(503),
      [], // a watch that ended without error
      status(503),
    );
    const { errors, calls } = await run(source);
    expect(errors).toEqual([
      [500, 1],
      [503, 1],
      [503, 2],
      [503, 4],
      [503, 4],
      [503, 1],
    ]);
    // A failed watch is watched again from the same resourceVersion, not relisted.
    expect(calls).toEqual([['list', undefined], ['list', undefined], ...Array(7).fill(['watch', '10'])]);
  });

  it('stops quietly on 404 by default, and retries it with onNotFound: retry', async () => {
    const quiet = new ScriptedSource(status(404), list('1'));
    const lw = new ListWatch(quiet, PATH, () => {}, log, {
      onError: () => {
        throw new Error('no error expected');
      },
    });
    await lw.start();
    expect(quiet.calls.map((c) => c.verb)).toEqual(['list']);

    const retried = await run(new ScriptedSource(status(404), status(404), list('1')), { onNotFound: 'retry' });
    expect(retried.errors).toEqual([
      [404, 1],
      [404, 2],
    ]);
    expect(retried.events).toEqual([['SYNC', undefined]]);
  });

  it('stop() aborts the running watch, ends a back-off wait and makes no further call', async () => {
    const source = new ScriptedSource(list('10'));
    const lw = new ListWatch(source, PATH, () => {}, log);
    const ended = lw.start();
    await source.drained;
    expect(source.signals[0].aborted).toBe(false);
    lw.stop();
    await ended;
    expect(source.signals[0].aborted).toBe(true);

    // A back-off of a minute is cut short by stop().
    const failing = new ScriptedSource(status(500));
    let waiting!: () => void;
    const backingOff = new Promise<void>((r) => {
      waiting = r;
    });
    const slow = new ListWatch(failing, PATH, () => {}, log, { initialBackoffMs: 60_000, onError: () => waiting() });
    const slowEnded = slow.start();
    await backingOff;
    slow.stop();
    await slowEnded;
    expect(failing.calls.map((c) => c.verb)).toEqual(['list']);
  });
});

describe('Informer', () => {
  it('keeps the objects by namespace/name and passes each event on with the previous version', async () => {
    const source = new ScriptedSource(list('10', obj('a', '1'), obj('n', '2', '')), [
      { type: 'MODIFIED', object: obj('a', '11') },
      { type: 'DELETED', object: obj('n', '12', '') },
    ]);
    const seen: [WatchEvent, string?, string?][] = [];
    const inf = new Informer(source, PATH, log, {
      onEvent: (type, o, prev) => seen.push([type, o?.metadata.resourceVersion, prev?.metadata.resourceVersion]),
    });
    const ended = inf.start();
    await source.drained;
    inf.stop();
    await ended;
    expect(seen).toEqual([
      ['ADDED', '1', undefined],
      ['ADDED', '2', undefined],
      ['SYNC', undefined, undefined],
      ['MODIFIED', '11', '1'],
      ['DELETED', '12', '2'],
    ]);
    expect([...inf.store.keys()]).toEqual(['default/a']);
  });
});
