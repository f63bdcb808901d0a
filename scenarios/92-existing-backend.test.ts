// The existing backend, really tested: a second embedded lab started as a bare cluster (no system), then
// `lab:up --cluster existing --kubeconfig <its kubeconfig>` installs the system into it, a scenario runs against it
// through GWLAB_SCENARIO_KUBECONFIG (as it would against any cluster), and lab:down removes what it installed.
import { join } from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { describe, expect, it } from 'vitest';
import { readLabRecord } from '../lab/state.ts';
import { Kube } from '../lab/toolkit/kube.ts';
import { ROOT, runCommand, useBareCluster } from './support/bare-cluster.ts';

/**
 * The scenarios run against the existing cluster; they must not depend on the embedded backend. 05 drives traffic
 * through a Gateway, reads config_dump by port-forward, relabels a route and runs explain: the whole path a user
 * takes on any cluster.
 */
const SCENARIOS = ['scenarios/00-lab.test.ts', 'scenarios/05-policy-selector-matches-nothing.test.ts'];

describe('existing backend against a second embedded lab', () => {
  const bare = useBareCluster('gwlab-existing-');

  it('lab:up --cluster existing installs the system into the cluster a kubeconfig points at', async () => {
    const r = await bare.labUpExisting();
    expect(r.code, r.out).toBe(0);
    expect(r.out).toContain('Lab ext is up (existing)');
    expect(readLabRecord('ext', bare.home)).toMatchObject({ backend: 'existing', context: bare.context() });
  }, 130_000);

  it('runs a scenario against it', async () => {
    const rec = readLabRecord('ext', bare.home)!;
    const r = await runCommand(
      process.execPath,
      [join(ROOT, 'node_modules', 'vitest', 'vitest.mjs'), 'run', '--project', 'scenarios', ...SCENARIOS],
      { ...bare.env, GWLAB_SCENARIO_KUBECONFIG: rec.kubeconfig, GWLAB_SCENARIO_CONTEXT: String(rec.context) },
      180_000,
    );
    expect(r.code, r.out.slice(-4000)).toBe(0);
    expect(stripVTControlCharacters(r.out)).toMatch(/Test Files\s+2 passed/);
  }, 190_000);

  it('lab:down of an existing lab removes what it installed and leaves the cluster running', async () => {
    const r = await bare.script(['scripts/lab-down.ts', '--name', 'ext'], 90_000);
    expect(r.code, r.out).toBe(0);
    const kube = Kube.fromFile(bare.kubeconfig(), bare.context());
    const namespaces = (await kube.list('v1', 'Namespace')).map((n) => n.metadata?.name);
    expect(namespaces).toContain('default');
    const cp = await kube.get('v1', 'Namespace', 'gwvendor-system');
    expect(cp === undefined || cp.metadata?.deletionTimestamp !== undefined).toBe(true);
  }, 100_000);
});
