// Events expire like kube-apiserver's --event-ttl: deleted a TTL after their last write (a write renews the lease),
// Events from before a restart by the time they carry, and through the whole server (kubectl and a watch see them go).
import { afterEach, expect, it } from 'vitest';
import { EventTtl } from './event-ttl.ts';
import { type K8sObject, Store } from './store.ts';
import { startTestLab, type TestLab } from './testing/test-lab.ts';

const event = (name: string, lastTimestamp?: string): K8sObject => ({
  apiVersion: 'v1',
  kind: 'Event',
  metadata: { name, namespace: 'ns', creationTimestamp: lastTimestamp },
  involvedObject: { kind: 'Pod', namespace: 'ns', name: 'p' },
  reason: 'Unhealthy',
  lastTimestamp,
  count: 1,
});

const stops: (() => unknown)[] = [];
afterEach(async () => {
  for (const s of stops.splice(0)) await s();
});

it('deletes an Event a TTL after its last write; a write renews the lease', () => {
  let now = 1_000_000;
  const store = new Store();
  const ttl = new EventTtl(store, { ttlSeconds: 3600, now: () => now });
  stops.push(() => ttl.stop());
  store.put('core/events', 'ns/a', event('a'));
  store.put('core/events', 'ns/b', event('b'));
  store.commit();
  now += 3000_000;
  store.put('core/events', 'ns/b', { ...event('b'), count: 2 });
  store.commit();
  now += 600_001;
  expect(ttl.sweep()).toBe(1);
  expect(store.get('core/events', 'ns/a')).toBeUndefined();
  expect(store.get('core/events', 'ns/b')).toBeDefined();
  now += 3000_000;
  expect(ttl.sweep()).toBe(1);
  expect(store.count('core/events')).toBe(0);
});

it('Events written before a restart expire by the time they carry', () => {
  const now = Date.parse('2026-01-01T12:00:00Z');
  const store = new Store();
  store.put('core/events', 'ns/old', event('old', '2026-01-01T10:00:00Z'));
  store.put('core/events', 'ns/recent', event('recent', '2026-01-01T11:30:00Z'));
  const ttl = new EventTtl(store, { ttlSeconds: 3600, now: () => now });
  stops.push(() => ttl.stop());
  expect(ttl.sweep()).toBe(1);
  expect(store.get('core/events', 'ns/old')).toBeUndefined();
  expect(store.get('core/events', 'ns/recent')).toBeDefined();
});

it('the server deletes expired Events: kubectl no longer lists them and a watch sees DELETED', async () => {
  const lab: TestLab = await startTestLab({ eventTtlSeconds: 2 });
  stops.push(() => lab.stop());
  await lab.k(['create', 'namespace', 'ns']);
  const ev = { ...event('e1'), metadata: { name: 'e1', namespace: 'ns' } };
  delete (ev as Partial<K8sObject>).lastTimestamp;
  await lab.k(['create', '-f', lab.file('ev.json', JSON.stringify(ev))]);
  const rv = JSON.parse(await lab.k(['get', 'events', '-n', 'ns', '-o', 'json'])).metadata.resourceVersion;
  expect(await lab.k(['get', 'events', '-n', 'ns', '-o', 'name'])).toContain('e1');
  const watched = await lab.k([
    'get',
    '--raw',
    `/api/v1/namespaces/ns/events?watch=1&resourceVersion=${rv}&timeoutSeconds=6`,
  ]);
  expect(watched).toMatch(/"type":"DELETED","object":\{[^\n]*"name":"e1"/);
  expect((await lab.k(['get', 'events', '-n', 'ns', '-o', 'name'])).trim()).toBe('');
});
