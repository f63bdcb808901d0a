// The embedded cluster's own client without client-node: KubeClient.watch streams a watch as kube-apiserver sends it
// (one JSON event per line, `?watch=true&resourceVersion=`; a resourceVersion older than the history ends with an ERROR
// event carrying 410 Expired, as client-go's reflector expects), the project's list-watch loop
// (system/shared/kube/list-watch.ts, its steps pinned there over a scripted source) lists over KubeClient, watches and
// relists after 410 against the real API server, and the lab process's module graph (cluster.ts) no longer loads
// @kubernetes/client-node at all (issue 14: its ~870 modules were ~0.4 s of CPU at every lab start).
import { execFile } from 'node:child_process';
import type { TLSSocket } from 'node:tls';
import type { buildConnector } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ListWatch, type WatchEvent } from '../../../system/shared/kube/list-watch.ts';
import { LogRegistry } from '../../../system/shared/log.ts';
import { startTestLab, type TestLab } from '../apiserver/testing/test-lab.ts';
import { KubeClient, KubeError, sharedTlsConnector, type WatchEventLine } from './kube-client.ts';

const CMS = '/api/v1/namespaces/default/configmaps';
const cm = (name: string, data: Record<string, string> = {}) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'default' },
  data,
});
const log = new LogRegistry({ level: 'warn', sink: (l) => process.stderr.write(`${l}\n`) }).logger('test');

async function until<T>(what: string, fn: () => T | undefined | false, timeoutMs = 15_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    const v = fn();
    if (v) return v;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`timed out waiting for ${what}`);
}

let lab: TestLab;
let client: KubeClient;
beforeAll(async () => {
  // A short history, so that a watch from an old resourceVersion is answered 410 Expired.
  lab = await startTestLab({ watchHistory: 1000 });
  client = new KubeClient(lab.server.credentials({ user: 'system:kube-controller-manager' }));
});
afterAll(async () => {
  await client?.close();
  await lab?.stop();
});

describe('KubeClient.watch', () => {
  it('streams ADDED, MODIFIED and DELETED from a resourceVersion, and stops when aborted', async () => {
    const list = await client.request('GET', CMS);
    const seen: WatchEventLine[] = [];
    const abort = new AbortController();
    const done = client.watch(
      CMS,
      { resourceVersion: list.metadata.resourceVersion },
      (e) => seen.push(e),
      abort.signal,
    );
    await client.request('POST', CMS, cm('w1'));
    await client.request('PATCH', `${CMS}/w1`, { data: { a: '1' } }, 'application/merge-patch+json');
    await client.request('DELETE', `${CMS}/w1`);
    await until('three events', () => seen.length >= 3);
    expect(seen.map((e) => [e.type, e.object.metadata.name])).toEqual([
      ['ADDED', 'w1'],
      ['MODIFIED', 'w1'],
      ['DELETED', 'w1'],
    ]);
    expect(seen[1].object.data).toEqual({ a: '1' });
    abort.abort();
    await expect(done).rejects.toThrow();
  });

  it('lists a collection with its params as the query (ListWatchSource.list: a labelSelector)', async () => {
    await client.request('POST', CMS, {
      ...cm('labelled'),
      metadata: { ...cm('labelled').metadata, labels: { l: 'x' } },
    });
    const list = await client.list(CMS, { labelSelector: 'l=x' });
    expect(list.items.map((o) => o.metadata.name)).toEqual(['labelled']);
    expect(list.metadata?.resourceVersion).toMatch(/^\d+$/);
    await client.request('DELETE', `${CMS}/labelled`);
  });

  it('is refused with a KubeError of the status (a resource that does not exist: 404)', async () => {
    const err = await client
      .watch('/apis/example.com/v1/nothings', {}, () => {}, new AbortController().signal)
      .catch((e) => e);
    expect(err).toBeInstanceOf(KubeError);
    expect((err as KubeError).code).toBe(404);
  });
});

describe('TLS sessions', () => {
  // Over HTTPS: a client outside the lab process, or the lab's own clients where the loopback socket cannot be made.
  it("resumes the first connection's TLS session on every other connection of the server's clients", async () => {
    expect(lab.server.credentials({ user: 'system:node:x' }).connector).toBe(lab.server.credentials().connector);
    const creds = {
      server: lab.server.url,
      caPem: lab.server.caPem,
      token: lab.server.adminToken,
      connector: sharedTlsConnector(lab.server.caPem),
    };
    const resumed: boolean[] = [];
    const connector: buildConnector.connector = (o, cb) =>
      creds.connector!(o, (...args) => {
        if (args[1]) resumed.push((args[1] as TLSSocket).isSessionReused());
        cb(...args);
      });
    const a = new KubeClient({ ...creds, connector });
    const b = new KubeClient({ ...creds, connector });
    try {
      await a.request('GET', '/version');
      // Six at once: six new connections of another client.
      await Promise.all(Array.from({ length: 6 }, () => b.request('GET', '/api/v1/namespaces/default')));
      // The first may resume a session of this server's earlier clients already; every later one does.
      expect(resumed.length).toBeGreaterThanOrEqual(2);
      expect(resumed.slice(1)).toEqual(resumed.slice(1).map(() => true));
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });
});

describe('ListWatch', () => {
  it('lists, then follows changes; a watch ended by 410 Expired continues with a relist', async () => {
    await client.request('POST', CMS, cm('keep'));
    await client.request('POST', CMS, cm('gone'));
    const events: [WatchEvent, string?][] = [];
    const lw = new ListWatch(client, CMS, (type, o) => events.push([type, o?.metadata.name]), log);
    lw.start();
    try {
      await until('the first list', () => events.some(([t]) => t === 'SYNC'));
      expect(new Set(lw.objects().map((o) => o.metadata.name))).toEqual(new Set(['keep', 'gone']));
      await client.request('POST', CMS, cm('new'));
      await until('new', () => events.some(([t, n]) => t === 'ADDED' && n === 'new'));

      // A watch from a resourceVersion the history no longer holds is ended with ERROR 410.
      const first = (await client.request('GET', CMS)).metadata.resourceVersion;
      for (let i = 0; i < 1_100; i++) await client.request('POST', CMS, cm(`filler-${i}`));
      const stale: WatchEventLine[] = [];
      await client.watch(CMS, { resourceVersion: first }, (e) => stale.push(e), new AbortController().signal);
      expect(stale).toEqual([{ type: 'ERROR', object: expect.objectContaining({ code: 410, reason: 'Expired' }) }]);
      // ListWatch's watch step answers such an end with '' (relist) rather than an error to back off from.
      const idle = new ListWatch(client, CMS, () => {}, log) as unknown as { watchOnce(rv: string): Promise<string> };
      await expect(idle.watchOnce(first)).resolves.toBe('');

      // The loop itself keeps up: every filler and then a deletion arrive as events.
      await until('fillers', () => lw.objects().length === 3 + 1_100);
      await client.request('DELETE', `${CMS}/gone`);
      await until('gone deleted', () => events.some(([t, n]) => t === 'DELETED' && n === 'gone'));
      expect(lw.objects().some((o) => o.metadata.name === 'gone')).toBe(false);
    } finally {
      lw.stop();
    }
  });
});

describe('the lab process', () => {
  it('loads no module of @kubernetes/client-node (its controllers and node agent use KubeClient)', async () => {
    const probe = `
      import { registerHooks } from 'node:module';
      const importers = new Set();
      registerHooks({ resolve(spec, ctx, next) {
        const r = next(spec, ctx);
        if (r.url.includes('/@kubernetes/client-node/')) importers.add(ctx.parentURL);
        return r;
      } });
      await import('./lab/embedded/cluster.ts');
      console.log(JSON.stringify([...importers]));`;
    const out = await new Promise<string>((resolve, reject) =>
      execFile(process.execPath, ['--input-type=module', '-e', probe], { cwd: process.cwd() }, (err, stdout, stderr) =>
        err ? reject(new Error(stderr)) : resolve(stdout),
      ),
    );
    expect(JSON.parse(out.trim().split('\n').at(-1)!)).toEqual([]);
  });
});
