// Durability: an @kubernetes/client-node informer idles for over 90 s and keeps receiving events, survives an API
// server restart (objects are written as soon as the server is back, before the informer reconnects: a relay holds
// its connections until then and the request log shows the order; it resumes from its last resourceVersion and
// receives each of those writes once) and relists when its resourceVersion left the history; objects keep uid and
// resourceVersion across the restart; acknowledged creates survive a SIGKILL of the server process.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { type AddressInfo, connect, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api, KubeConfig, makeInformer, type V1ConfigMap } from '@kubernetes/client-node';
import { Agent, fetch } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { labPaths } from '../../state.ts';
import { startApiServer } from './index.ts';
import { startTestLab, type TestLab } from './testing/test-lab.ts';

let lab: TestLab;

beforeAll(async () => {
  lab = await startTestLab();
});
afterAll(async () => {
  await lab?.stop();
});

async function until(what: string, fn: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (await fn()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const cm = (name: string, data: Record<string, string> = { v: '1' }) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'default' },
  data,
});

/**
 * A TCP relay in front of the API server for the informer's connections only. While `held`, it refuses the
 * informer's connections (accepted, then closed at once: to the informer, the server is not back yet), so the test
 * decides when the informer reconnects instead of racing its 300-ms retry. TLS passes through untouched (the
 * serving certificate names 127.0.0.1, whatever the port).
 */
async function startRelay(target: () => number) {
  const sockets = new Set<Socket>();
  const relay = {
    held: false,
    refused: 0,
    url: '',
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
  const server = createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    if (relay.held) {
      relay.refused++;
      client.destroy();
      return;
    }
    const upstream = connect({ host: '127.0.0.1', port: target() });
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
    client.pipe(upstream).pipe(client);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  relay.url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return relay;
}

describe('informer across idle periods and restarts', () => {
  it('keeps receiving events for over 90 s idle, then resumes after a restart without missing writes', {
    timeout: 180_000,
  }, async () => {
    const direct = await lab.server.kubeConfig();
    // The informer talks through the relay, the test's own writes go straight to the server.
    const relay = await startRelay(() => lab.server.port);
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: direct.clusters.map((c) => ({ ...c, server: relay.url })),
      users: direct.users,
      contexts: direct.contexts,
      currentContext: direct.currentContext,
    });
    const api = kc.makeApiClient(CoreV1Api);
    const events: string[] = [];
    const informer = makeInformer<V1ConfigMap>(kc, '/api/v1/namespaces/default/configmaps', () =>
      api.listNamespacedConfigMap({ namespace: 'default' }),
    );
    let errors = 0;
    informer.on('add', (o) => events.push(`ADD ${o.metadata?.name}`));
    informer.on('update', (o) => events.push(`UPDATE ${o.metadata?.name} ${o.data?.v}`));
    informer.on('delete', (o) => events.push(`DELETE ${o.metadata?.name}`));
    // client-node's informer stops on any error other than 410; a controller restarts it, from its last resourceVersion.
    informer.on('error', () => {
      errors++;
      setTimeout(() => void informer.start(), 300);
    });
    try {
      await informer.start();
      await api.createNamespacedConfigMap({ namespace: 'default', body: cm('a1') });
      await api.createNamespacedConfigMap({ namespace: 'default', body: cm('gone') });
      await until('first events', () => events.includes('ADD a1') && events.includes('ADD gone'));

      // Idle for 46 s, one write, idle again past 90 s in total, one write: both arrive on the same watch.
      // GWLAB_IDLE_MS shortens the idle period when debugging this test; the acceptance value is over 90 s.
      const idle = Number(process.env.GWLAB_IDLE_MS ?? 91_000);
      const t0 = Date.now();
      await new Promise((r) => setTimeout(r, idle / 2 + 500));
      await api.createNamespacedConfigMap({ namespace: 'default', body: cm('mid') });
      await until('event after 46 s idle', () => events.includes('ADD mid'), 5000);
      await new Promise((r) => setTimeout(r, Math.max(0, idle - (Date.now() - t0))));
      await api.replaceNamespacedConfigMap({ namespace: 'default', name: 'a1', body: { ...cm('a1', { v: '2' }) } });
      await until('event after 91 s', () => events.includes('UPDATE a1 2'), 5000);
      expect(Date.now() - t0).toBeGreaterThanOrEqual(idle);
      expect(errors).toBe(0);

      const a1Before = await api.readNamespacedConfigMap({ namespace: 'default', name: 'a1' });
      const midBefore = await api.readNamespacedConfigMap({ namespace: 'default', name: 'mid' });
      const lastRv = (informer as unknown as { latestResourceVersion(): string }).latestResourceVersion();
      expect(lastRv).toBe(a1Before.metadata?.resourceVersion);
      const auditStart = auditLines().length;
      // From here until the writes below are acknowledged the informer cannot reach the server: it keeps retrying
      // (every 300 ms) and each attempt is refused, as if the server were still down.
      relay.held = true;
      await lab.restart();
      // Written as soon as the server is back, before the informer has reconnected.
      const api2 = (await lab.server.kubeConfig()).makeApiClient(CoreV1Api);
      const t1 = Date.now();
      for (let i = 0; i < 5; i++)
        await api2.createNamespacedConfigMap({ namespace: 'default', body: cm(`after-${i}`) });
      await api2.replaceNamespacedConfigMap({ namespace: 'default', name: 'a1', body: cm('a1', { v: '3' }) });
      await api2.deleteNamespacedConfigMap({ namespace: 'default', name: 'gone' });
      const writesMs = Date.now() - t1;
      expect(writesMs).toBeLessThan(5000);
      // The informer noticed the restart and was trying to reconnect while the writes were made.
      await until('a refused reconnect', () => relay.refused > 0, 5000);
      const errorsWhileDown = errors;
      expect(errorsWhileDown).toBeGreaterThan(0);
      relay.held = false;
      await until('events written during the restart', () =>
        ['ADD after-0', 'ADD after-1', 'ADD after-2', 'ADD after-3', 'ADD after-4', 'UPDATE a1 3', 'DELETE gone'].every(
          (e) => events.includes(e),
        ),
      );

      // The request log, in the order the server answered: every write above, then the informer's first request to
      // the restarted server, a watch from its last resourceVersion (no relist). The old server's closing lines of
      // the ended watch (stage ResponseComplete) are not requests to the new one.
      const log = auditLines().slice(auditStart);
      const isWrite = (l: any) => l.resource === 'configmaps' && ['create', 'update', 'delete'].includes(l.verb);
      const isInformer = (l: any) =>
        l.resource === 'configmaps' && (l.verb === 'list' || (l.verb === 'watch' && l.stage === 'ResponseStarted'));
      const writes = log.filter(isWrite);
      expect(writes.map((l) => l.verb)).toEqual(['create', 'create', 'create', 'create', 'create', 'update', 'delete']);
      expect(writes.at(-1).name).toBe('gone');
      const lastWrite = log.findLastIndex(isWrite);
      const firstInformer = log.findIndex(isInformer);
      expect(firstInformer, 'the informer reached the restarted server before the writes').toBeGreaterThan(lastWrite);
      expect(log[firstInformer].verb).toBe('watch');
      expect(log[firstInformer].uri).toContain(`resourceVersion=${lastRv}`);
      expect(log.filter((l) => l.resource === 'configmaps' && l.verb === 'list')).toEqual([]);

      // Objects keep their uid and resourceVersion across the restart (read before it and after it); the revision
      // counter continues where it was, so the write after the restart has a higher resourceVersion.
      const midAfter = await api2.readNamespacedConfigMap({ namespace: 'default', name: 'mid' });
      const a1After = await api2.readNamespacedConfigMap({ namespace: 'default', name: 'a1' });
      expect(midBefore.metadata?.uid).toBeTruthy();
      expect(midAfter.metadata?.uid).toBe(midBefore.metadata?.uid);
      expect(midAfter.metadata?.resourceVersion).toBe(midBefore.metadata?.resourceVersion);
      expect(midAfter.metadata?.creationTimestamp).toEqual(midBefore.metadata?.creationTimestamp);
      expect(a1After.metadata?.uid).toBe(a1Before.metadata?.uid);
      expect(Number(a1After.metadata?.resourceVersion)).toBeGreaterThan(Number(lastRv));
      // Each event exactly once.
      for (const e of ['ADD after-0', 'DELETE gone', 'UPDATE a1 3'])
        expect(events.filter((x) => x === e)).toHaveLength(1);
    } finally {
      await informer.stop();
      await relay.close();
    }
  });

  it('relists when its resourceVersion is older than the history (410 Expired)', { timeout: 60_000 }, async () => {
    const small = await startTestLab({ watchHistory: 1000 });
    try {
      const kc = await small.server.kubeConfig();
      const api = kc.makeApiClient(CoreV1Api);
      const names = new Set<string>();
      const informer = makeInformer<V1ConfigMap>(kc, '/api/v1/namespaces/default/configmaps', () =>
        api.listNamespacedConfigMap({ namespace: 'default' }),
      );
      informer.on('add', (o) => names.add(o.metadata!.name!));
      informer.on('delete', (o) => names.delete(o.metadata!.name!));
      await informer.start();
      await api.createNamespacedConfigMap({ namespace: 'default', body: cm('x0') });
      await until('x0', () => names.has('x0'));
      await informer.stop();
      await api.deleteNamespacedConfigMap({ namespace: 'default', name: 'x0' });
      const agent = new Agent({ connect: { ca: small.server.caPem }, connections: 16 });
      const post = (n: string) =>
        fetch(`${small.server.url}/api/v1/namespaces/default/configmaps`, {
          method: 'POST',
          dispatcher: agent,
          headers: { Authorization: `Bearer ${small.server.adminToken}`, 'Content-Type': 'application/json' },
          body: JSON.stringify(cm(n)),
        }).then((r) => r.text());
      for (let i = 0; i < 1100; i += 50) await Promise.all(Array.from({ length: 50 }, (_, j) => post(`y${i + j}`)));
      await agent.close();
      await informer.start();
      await until('relisted', () => names.size === 1100 && !names.has('x0'));
      await informer.stop();
    } finally {
      await small.stop();
    }
  });
});

function auditLines(): any[] {
  return readFileSync(labPaths(lab.name, lab.home).auditLog, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

describe('SIGKILL', () => {
  it('every create acknowledged before a SIGKILL survives it', { timeout: 60_000 }, async () => {
    const home = mkdtempSync(join(tmpdir(), 'gwlab-kill-'));
    const child = spawn(
      process.execPath,
      [join(import.meta.dirname, 'main.ts'), '--name', 'kill', '--no-controllers', '--log-level', 'warn'],
      {
        env: { ...process.env, GWLAB_HOME: home },
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    try {
      await new Promise<void>((resolve, reject) => {
        child.stdout!.on('data', (d: Buffer) => {
          if (d.toString().includes('export KUBECONFIG=')) resolve();
        });
        child.on('exit', (c) => reject(new Error(`server exited ${c}`)));
      });
      const kcText = readFileSync(labPaths('kill', home).kubeconfig, 'utf8');
      const server = /server: (\S+)/.exec(kcText)![1];
      const token = /token: (\S+)/.exec(kcText)![1];
      const ca = Buffer.from(/certificate-authority-data: (\S+)/.exec(kcText)![1], 'base64').toString();
      const agent = new Agent({ connect: { ca }, connections: 16 });
      const acked = new Map<string, string>();
      let next = 0;
      let killed = false;
      const worker = async () => {
        while (next < 1000 && !killed) {
          const name = `k${next++}`;
          try {
            const r = await fetch(`${server}/api/v1/namespaces/default/configmaps`, {
              method: 'POST',
              dispatcher: agent,
              headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
              body: JSON.stringify(cm(name, { payload: 'x'.repeat(900) })),
            });
            const body = (await r.json()) as any;
            if (r.status === 201) acked.set(name, body.metadata.uid);
          } catch {
            return;
          }
          if (acked.size >= 400 && !killed) {
            killed = true;
            child.kill('SIGKILL');
          }
        }
      };
      await Promise.all(Array.from({ length: 16 }, worker));
      await new Promise((r) => (child.exitCode !== null || child.signalCode ? r(null) : child.once('exit', r)));
      await agent.close().catch(() => {});
      expect(killed).toBe(true);
      expect(acked.size).toBeGreaterThanOrEqual(400);
      const restarted = await startApiServer({ labName: 'kill', home });
      try {
        const a2 = new Agent({ connect: { ca: restarted.caPem } });
        const res = await fetch(`${restarted.url}/api/v1/namespaces/default/configmaps`, {
          dispatcher: a2,
          headers: { Authorization: `Bearer ${restarted.adminToken}` },
        });
        const list = (await res.json()) as any;
        const stored = new Map<string, string>(list.items.map((i: any) => [i.metadata.name, i.metadata.uid]));
        for (const [name, uid] of acked) expect(stored.get(name), name).toBe(uid);
        await a2.close();
      } finally {
        await restarted.stop();
      }
    } finally {
      if (child.exitCode === null && !child.signalCode) child.kill('SIGKILL');
      rmSync(home, { recursive: true, force: true });
    }
  });
});
