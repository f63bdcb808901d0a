import { describe, expect, it } from 'vitest';
import { derive, InputCollection, Runtime } from './collection.ts';

interface Route {
  name: string;
  gateway: string;
  path: string;
}
interface Gw {
  name: string;
}

function setup() {
  const rt = new Runtime({ autoFlush: false });
  const gateways = new InputCollection<Gw>(rt, 'Gateways', (g) => g.name);
  const routes = new InputCollection<Route>(rt, 'Routes', (r) => r.name);
  const byGateway = routes.index('gateway', (r) => [r.gateway]);
  const config = derive(rt, 'Config', gateways, (ctx, gw) => ({
    gateway: gw.name,
    paths: ctx
      .fetchIndex(byGateway, gw.name)
      .map((r) => r.path)
      .sort(),
  }));
  const seen: string[] = [];
  config.subscribe((evs) => seen.push(...evs.map((e) => `${e.key}:${e.new ? 'set' : 'del'}`)));
  return { rt, gateways, routes, config, seen };
}

describe('krt collections', () => {
  it('recompute only the outputs whose dependencies changed', () => {
    const { rt, gateways, routes, config, seen } = setup();
    for (const g of ['a', 'b', 'c']) gateways.upsert({ name: g });
    for (let i = 0; i < 30; i++) routes.upsert({ name: `r${i}`, gateway: ['a', 'b', 'c'][i % 3], path: `/p${i}` });
    rt.flush();
    expect(config.recomputations).toBe(3);
    expect(config.get('a')!.paths).toHaveLength(10);
    seen.length = 0;

    routes.upsert({ name: 'r0', gateway: 'a', path: '/changed' });
    expect(rt.flush()).toBe(1);
    expect(config.recomputations).toBe(4);
    expect(config.get('a')!.paths).toContain('/changed');
    expect(seen).toEqual(['a:set']);

    // Moving a route between gateways recomputes both (old and new index keys).
    routes.upsert({ name: 'r0', gateway: 'b', path: '/changed' });
    expect(rt.flush()).toBe(2);
    expect(config.get('b')!.paths).toContain('/changed');
    expect(config.get('a')!.paths).not.toContain('/changed');
  });

  it('an unchanged output stops propagation, and a deleted parent deletes its output', () => {
    const { rt, gateways, routes, config, seen } = setup();
    gateways.upsert({ name: 'a' });
    routes.upsert({ name: 'r', gateway: 'a', path: '/x' });
    rt.flush();
    seen.length = 0;
    routes.upsert({ name: 'r2', gateway: 'zzz', path: '/y' });
    expect(rt.flush()).toBe(0);
    routes.upsert({ name: 'r', gateway: 'a', path: '/x' }); // identical: no event at all
    expect(rt.flush()).toBe(0);
    gateways.delete('a');
    rt.flush();
    expect(config.get('a')).toBeUndefined();
    expect(seen).toEqual(['a:del']);
  });

  it('is synced once its inputs are synced and nothing is pending; dumps outputs, inputs and dependencies', () => {
    const { rt, gateways, routes, config } = setup();
    gateways.upsert({ name: 'a' });
    routes.upsert({ name: 'r', gateway: 'a', path: '/x' });
    expect(config.synced()).toBe(false);
    gateways.markSynced();
    routes.markSynced();
    expect(config.synced()).toBe(false);
    rt.flush();
    expect(config.synced()).toBe(true);
    const d = config.dump();
    expect(d.state.outputs).toEqual({ a: { gateway: 'a', paths: ['/x'] } });
    expect(d.state.inputs!.a).toEqual({ outputs: ['a'], dependencies: ['Gateways/a', 'Routes[gateway=a]'] });
    expect(rt.dump().map((c) => c.name)).toEqual(['Gateways', 'Routes', 'Config']);
  });

  it('derived collections wait for start(), then compute the whole initial state once', () => {
    const rt = new Runtime({ autoFlush: false, start: false });
    const src = new InputCollection<{ k: string; v: number }>(rt, 'Src', (x) => x.k);
    const sum = derive(rt, 'Sum', src, (_ctx, x) => ({ k: x.k, twice: x.v * 2 }));
    for (let i = 0; i < 5; i++) src.upsert({ k: `k${i}`, v: i });
    src.upsert({ k: 'k0', v: 10 });
    expect(rt.flush()).toBe(0);
    rt.start();
    expect(rt.flush()).toBe(5);
    expect(sum.get('k0')).toEqual({ k: 'k0', twice: 20 });
  });

  it('key and whole-collection dependencies', () => {
    const rt = new Runtime({ autoFlush: false });
    const a = new InputCollection<{ k: string; ref: string }>(rt, 'A', (x) => x.k);
    const b = new InputCollection<{ k: string; n: number }>(rt, 'B', (x) => x.k);
    const joined = derive(rt, 'J', a, (ctx, x) => ({
      k: x.k,
      n: ctx.fetch(b, x.ref)?.n ?? -1,
      total: ctx.fetchAll(b).length,
    }));
    a.upsert({ k: 'a1', ref: 'b1' });
    a.upsert({ k: 'a2', ref: 'b2' });
    rt.flush();
    expect(joined.get('a1')).toEqual({ k: 'a1', n: -1, total: 0 });
    b.upsert({ k: 'b1', n: 7 });
    expect(rt.flush()).toBe(2); // both read the whole of B
    expect(joined.get('a1')).toEqual({ k: 'a1', n: 7, total: 1 });
  });
});

describe('krt errors', () => {
  it('a throwing item keeps its previous output, is reported, and the others go on', () => {
    const seen: string[] = [];
    const rt = new Runtime({ autoFlush: false, onError: (c, k, e) => seen.push(`${c}/${k}: ${(e as Error).message}`) });
    const src = new InputCollection<{ k: string; v: number }>(rt, 'Src', (x) => x.k);
    const out = derive(rt, 'Out', src, (_ctx, x) => {
      if (x.v < 0) throw new Error('negative');
      return { k: x.k, v: x.v };
    });
    src.upsert({ k: 'a', v: 1 });
    src.upsert({ k: 'b', v: 2 });
    rt.flush();
    src.upsert({ k: 'a', v: -1 });
    src.upsert({ k: 'b', v: 3 });
    rt.flush();
    expect(out.get('a')).toEqual({ k: 'a', v: 1 });
    expect(out.get('b')).toEqual({ k: 'b', v: 3 });
    expect(seen).toEqual(['Out/a: negative']);
    expect(out.dump().state.inputs!.a.error).toBe('negative');
  });
});
