// collect()'s contract with its collectors, on an embedded API server: each runs independently — one that throws is
// recorded as failed with its error, one that hangs is cut off at its time limit and nothing it writes later lands in
// the folder — while the others complete, and index.json is what collect() returns.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestLab, type TestLab } from '../embedded/apiserver/testing/test-lab.ts';
import { Kube } from '../toolkit/kube.ts';
import { type CollectIndex, type Collector, collect } from './collect.ts';

describe('collect', () => {
  let lab: TestLab;
  let dir: string;
  let index: CollectIndex;
  let lateWrite: Promise<void> | undefined;

  beforeAll(async () => {
    lab = await startTestLab({ labName: 'collect' });
    const kube = Kube.fromFile(lab.server.kubeconfigPath);
    await kube.apply(`
apiVersion: v1
kind: Namespace
metadata: {name: c1}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: c1}
data: {mode: debug}
`);
    const throws: Collector = {
      name: 'throws',
      what: 'a collector that fails',
      run: async () => {
        throw new Error('broken on purpose; run: something else');
      },
    };
    const hangs: Collector = {
      name: 'hangs',
      what: 'a collector that never finishes on time',
      run: (_ctx, out) =>
        new Promise(() => {
          lateWrite = new Promise((resolve) =>
            setTimeout(() => resolve(out.write('late/written-after-the-limit.txt', 'late')), 2_500),
          );
        }),
    };
    const partial: Collector = {
      name: 'partial',
      what: 'a collector that writes some files and reports one part failed',
      run: async (_ctx, out) => {
        await out.write('partial/ok.txt', 'fine');
        return { errors: ['part two: no answer'], notes: ['part one written'] };
      },
    };
    dir = mkdtempSync(join(tmpdir(), 'gwlab-collect-test-'));
    index = await collect(kube, dir, {
      namespaces: ['c1'],
      extra: [throws, hangs, partial],
      collectorTimeoutMs: 1_500,
    });
    await lateWrite;
  }, 60_000);

  afterAll(async () => {
    await lab?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('records a throwing collector as failed with its error, and the others still run', () => {
    const byName = new Map(index.collectors.map((c) => [c.name, c]));
    expect(byName.get('throws')).toMatchObject({
      status: 'failed',
      error: 'broken on purpose; run: something else',
      files: [],
    });
    expect(byName.get('resources')?.status).toBe('ok');
    expect(byName.get('resources')?.files).toContain('resources/c1/ConfigMap.yaml');
    expect(readFileSync(join(dir, 'resources/c1/ConfigMap.yaml'), 'utf8')).toContain('mode: debug');
    expect(byName.get('logs')?.status).toBe('ok');
    // No control plane and no pods here: failed with the reason, and skipped with the reason.
    expect(byName.get('controlplane')?.status).toBe('failed');
    expect(byName.get('proxies')).toMatchObject({ status: 'skipped', reason: 'no proxy pods in namespaces c1' });
  });

  it('cuts a hanging collector off at its limit and drops what it writes afterwards', () => {
    const hangs = index.collectors.find((c) => c.name === 'hangs')!;
    expect(hangs.status).toBe('failed');
    expect(hangs.error).toMatch(/did not finish within 1.5 s/);
    expect(existsSync(join(dir, 'late'))).toBe(false);
  });

  it('keeps the files of a collector that failed in part, with its notes and errors', () => {
    const partial = index.collectors.find((c) => c.name === 'partial')!;
    expect(partial).toMatchObject({
      status: 'failed',
      files: ['partial/ok.txt'],
      error: 'part two: no answer',
      notes: ['part one written'],
    });
  });

  it('writes index.json as returned, naming every file written and nothing else', () => {
    expect(JSON.parse(readFileSync(join(dir, 'index.json'), 'utf8'))).toEqual(index);
    expect(index.namespaces).toEqual(['c1']);
    const written = readdirSync(dir, { recursive: true, encoding: 'utf8' })
      .filter((f) => statSync(join(dir, f)).isFile())
      .sort();
    expect(written).toEqual(['index.json', ...index.collectors.flatMap((c) => c.files)].sort());
  });
});
