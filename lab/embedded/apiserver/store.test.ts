// The kine-style store: one revision for everything, durable across reopen, watch history rebuilt from the log,
// compaction that keeps the history window and never resurrects deleted keys.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { HISTORY_FLOOR, HISTORY_WINDOW_MS, type K8sObject, Store } from './store.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const file = () => {
  const d = mkdtempSync(join(tmpdir(), 'gwlab-store-'));
  dirs.push(d);
  return join(d, 'state.db');
};
const cm = (name: string, v: string): K8sObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'ns' },
  data: { v },
});

it('keeps objects, resourceVersions and the watch history across reopen', () => {
  const f = file();
  let s = new Store({ file: f });
  s.put('core/configmaps', 'ns/a', cm('a', '1'));
  s.put('core/configmaps', 'ns/b', cm('b', '1'));
  s.put('core/configmaps', 'ns/a', cm('a', '2'));
  s.remove('core/configmaps', 'ns/b');
  s.commit();
  expect(s.revision()).toBe(4);
  s.close();
  s = new Store({ file: f });
  expect(s.revision()).toBe(4);
  expect(s.get('core/configmaps', 'ns/a')).toMatchObject({ data: { v: '2' }, metadata: { resourceVersion: '3' } });
  expect(s.get('core/configmaps', 'ns/b')).toBeUndefined();
  const h = s.since('core/configmaps', 1);
  expect(h !== 'expired' && h.map((e) => [e.rev, e.type, e.prev?.data?.v])).toEqual([
    [2, 'ADDED', undefined],
    [3, 'MODIFIED', '1'],
    [4, 'DELETED', '1'],
  ]);
  expect(s.json(s.get('core/configmaps', 'ns/a')!)).toContain('"resourceVersion":"3"');
  s.close();
});

it('compacts superseded rows beyond the kept revisions, answers expired beyond history, never resurrects', () => {
  const f = file();
  let s = new Store({ file: f, historySize: 1000, keepRevisions: 1000 });
  for (let i = 0; i < 3000; i++) {
    s.put('core/configmaps', `ns/k${i % 10}`, cm(`k${i % 10}`, String(i)));
    if (i % 50 === 0) s.commit();
  }
  s.remove('core/configmaps', 'ns/k3');
  s.commit();
  s.compactLog();
  expect(s.logRows()).toBeLessThanOrEqual(1000 + 10 + 1);
  expect(s.logRows()).toBeGreaterThanOrEqual(1000);
  expect(s.since('core/configmaps', 5)).toBe('expired');
  const recent = s.since('core/configmaps', s.revision() - 900);
  expect(recent !== 'expired' && recent.length).toBe(900);
  s.close();
  s = new Store({ file: f, historySize: 1000, keepRevisions: 1000 });
  expect(s.get('core/configmaps', 'ns/k3')).toBeUndefined();
  expect(s.get('core/configmaps', 'ns/k4')?.data?.v).toBe('2994');
  expect(s.list('core/configmaps').length).toBe(9);
  expect(s.revision()).toBe(3001);
  s.close();
});

it('delivers events at commit, in revision order', () => {
  const s = new Store();
  const seen: number[] = [];
  s.subscribe('core/configmaps', (e) => seen.push(e.rev));
  s.put('core/configmaps', 'ns/a', cm('a', '1'));
  s.put('core/configmaps', 'ns/a', cm('a', '2'));
  expect(seen).toEqual([]);
  s.commit();
  expect(seen).toEqual([1, 2]);
});

it('checkpoints the WAL and compacts in a later turn, never inside a commit (whose watch events would wait)', async () => {
  const f = file();
  const s = new Store({ file: f, keepRevisions: 1000, historySize: 1000 });
  const db = (s as unknown as { db: { exec(sql: string): void } }).db;
  const exec = db.exec.bind(db);
  const log: string[] = [];
  let inCommit = false;
  db.exec = (sql: string) => {
    log.push(`${inCommit ? 'in-commit' : 'later'}: ${sql.trim().split(/\s+/).slice(0, 2).join(' ')}`);
    exec(sql);
  };
  const commit = s.commit.bind(s);
  s.commit = () => {
    inCommit = true;
    try {
      commit();
    } finally {
      inCommit = false;
    }
  };
  const delivered: number[] = [];
  s.subscribe('core/configmaps', (ev) => delivered.push(ev.rev));
  // SQLite's own checkpoint (inside COMMIT, at 1,000 WAL pages) is off.
  expect((s as any).db.prepare('PRAGMA wal_autocheckpoint').get()).toEqual({ wal_autocheckpoint: 0 });
  for (let i = 0; i < 2500; i++) {
    s.put('core/configmaps', `ns/c${i % 100}`, cm(`c${i % 100}`, String(i)));
    s.commit();
    if (i % 50 === 49) await new Promise((r) => setImmediate(r));
  }
  await new Promise((r) => setImmediate(r));
  expect(delivered.length).toBe(2500);
  const checkpoints = log.filter((l) => l.includes('wal_checkpoint'));
  expect(checkpoints.length).toBeGreaterThanOrEqual(2);
  expect(checkpoints.every((l) => l.startsWith('later'))).toBe(true);
  // Compaction's own transaction runs later too; in a commit only the commit itself.
  expect(log.filter((l) => l.startsWith('in-commit')).every((l) => l === 'in-commit: COMMIT')).toBe(true);
  expect(log.some((l) => l === 'later: BEGIN')).toBe(true);
  expect(s.logRows()).toBeLessThan(2500); // compaction ran
  s.close();
  // Everything committed is there after reopen.
  const again = new Store({ file: f });
  expect(again.get('core/configmaps', 'ns/c99')).toMatchObject({ data: { v: '2499' } });
  again.close();
});

it('counts a write of this turn in revision() but not in committedRevision() until its event is delivered', () => {
  const s = new Store({ file: file() });
  s.put('core/configmaps', 'ns/a', cm('a', '1'));
  s.commit();
  const before = s.revision();
  expect(s.committedRevision()).toBe(before);
  const seen: number[] = [];
  s.subscribe('core/configmaps', (ev) => seen.push(ev.rev));
  s.put('core/configmaps', 'ns/b', cm('b', '1'));
  // A watch starting now from `before` finds no event in the history and must still take the one coming.
  expect(s.revision()).toBe(before + 1);
  expect(s.committedRevision()).toBe(before);
  expect(s.since('core/configmaps', before)).toEqual([]);
  s.commit();
  expect(seen).toEqual([before + 1]);
  expect(s.committedRevision()).toBe(before + 1);
  s.close();
});

it('keeps minutes of watch history, not days: events older than the window go (all but the latest 100), as etcd compacts every 5 min', () => {
  let now = 0;
  const s = new Store({ now: () => now });
  // A lab's steady writes: a Node status every 20 s for an hour.
  for (let i = 0; i < 180; i++) {
    now = i * 20_000;
    s.put('core/nodes', 'n', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n' }, status: { i } });
    s.commit();
  }
  const rev = s.revision();
  // 5 min at one write per 20 s is 15 events; the floor keeps 100.
  const kept = s.since('*', s.oldestRevision());
  expect(kept !== 'expired' && kept.length).toBe(HISTORY_FLOOR);
  expect(s.oldestRevision()).toBe(rev - HISTORY_FLOOR);
  expect(s.since('*', rev - HISTORY_FLOOR - 1)).toBe('expired');
  // A burst inside the window stays resumable in full (up to historySize).
  now += 1000;
  const before = s.revision();
  for (let i = 0; i < 500; i++) s.put('core/configmaps', `ns/c${i}`, cm(`c${i}`, '1'));
  s.commit();
  const burst = s.since('core/configmaps', before);
  expect(burst !== 'expired' && burst.length).toBe(500);
  // Once the burst is older than the window, the next write trims it to the floor.
  now += HISTORY_WINDOW_MS + 1;
  s.put('core/configmaps', 'ns/c0', cm('c0', '2'));
  s.commit();
  expect(s.since('core/configmaps', before)).toBe('expired');
  const left = s.since('*', s.oldestRevision());
  expect(left !== 'expired' && left.length).toBe(HISTORY_FLOOR);
});
