// The existing backend, really tested: a second embedded lab started as a bare cluster (no system), then
// `lab:up --cluster existing --kubeconfig <its kubeconfig>` installs the system into it, a scenario runs against it
// through GWLAB_SCENARIO_KUBECONFIG (as it would against any cluster), and lab:down removes what it installed.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stripVTControlCharacters } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { labDown, labUp } from '../lab/lifecycle.ts';
import { Progress } from '../lab/progress.ts';
import { readLabRecord } from '../lab/state.ts';
import { Kube } from '../lab/toolkit/kube.ts';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
/**
 * The scenarios run against the existing cluster; they must not depend on the embedded backend. 05 drives traffic
 * through a Gateway, reads config_dump by port-forward, relabels a route and runs explain: the whole path a user
 * takes on any cluster.
 */
const SCENARIOS = ['scenarios/00-lab.test.ts', 'scenarios/05-policy-selector-matches-nothing.test.ts'];

function run(args: string[], env: NodeJS.ProcessEnv, timeoutMs: number): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, args, { cwd: ROOT, env, timeout: timeoutMs, maxBuffer: 64 << 20 }, (err, so, se) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, out: `${so}\n${se}` }),
    );
  });
}

describe('existing backend against a second embedded lab', () => {
  const home = mkdtempSync(join(tmpdir(), 'gwlab-existing-'));
  const env: NodeJS.ProcessEnv = Object.fromEntries(
    Object.entries({ ...process.env, GWLAB_HOME: home, FORCE_COLOR: '0' }).filter(([k]) => !k.startsWith('VITEST')),
  );
  let clusterKubeconfig = '';
  let clusterContext = '';

  beforeAll(async () => {
    const up = await labUp({
      name: 'bare',
      home,
      backend: 'embedded',
      noInstall: true,
      progress: new Progress({ quiet: true }),
    });
    clusterKubeconfig = up.kubeconfig;
    clusterContext = up.context;
  }, 60_000);

  afterAll(async () => {
    const quiet = new Progress({ quiet: true });
    await labDown({ name: 'ext', home, progress: quiet }).catch(() => undefined);
    await labDown({ name: 'bare', home, progress: quiet }).catch(() => undefined);
    rmSync(home, { recursive: true, force: true });
  }, 60_000);

  it('lab:up --cluster existing installs the system into the cluster a kubeconfig points at', async () => {
    const r = await run(
      [
        'scripts/lab-up.ts',
        '--cluster',
        'existing',
        '--name',
        'ext',
        '--kubeconfig',
        clusterKubeconfig,
        '--context',
        clusterContext,
      ],
      env,
      120_000,
    );
    expect(r.code, r.out).toBe(0);
    expect(r.out).toContain('Lab ext is up (existing)');
    expect(readLabRecord('ext', home)).toMatchObject({ backend: 'existing', context: clusterContext });
  }, 130_000);

  it('runs a scenario against it', async () => {
    const rec = readLabRecord('ext', home)!;
    const r = await run(
      [join(ROOT, 'node_modules', 'vitest', 'vitest.mjs'), 'run', '--project', 'scenarios', ...SCENARIOS],
      { ...env, GWLAB_SCENARIO_KUBECONFIG: rec.kubeconfig, GWLAB_SCENARIO_CONTEXT: String(rec.context) },
      180_000,
    );
    expect(r.code, r.out.slice(-4000)).toBe(0);
    expect(stripVTControlCharacters(r.out)).toMatch(/Test Files\s+2 passed/);
  }, 190_000);

  it('lab:down of an existing lab removes what it installed and leaves the cluster running', async () => {
    const r = await run(['scripts/lab-down.ts', '--name', 'ext'], env, 90_000);
    expect(r.code, r.out).toBe(0);
    const kube = Kube.fromFile(clusterKubeconfig, clusterContext);
    const namespaces = (await kube.list('v1', 'Namespace')).map((n) => n.metadata?.name);
    expect(namespaces).toContain('default');
    const cp = await kube.get('v1', 'Namespace', 'gwvendor-system');
    expect(cp === undefined || cp.metadata?.deletionTimestamp !== undefined).toBe(true);
  }, 100_000);
});
