// KEEP=1 and running one scenario alone: a nested vitest runs one scenario file by itself with KEEP=1 under a
// temporary GWLAB_HOME. Its lab must stay up and registered as `scenarios` (so kubectl can look at what the scenario
// left), the next KEEP=1 run must reuse it, and a plain `npm run lab:down -- --name scenarios` must remove it with
// every process it started.
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../lab/install.ts';
import { labDown } from '../lab/lifecycle.ts';
import { Progress } from '../lab/progress.ts';
import { readLabRecord } from '../lab/state.ts';
import { Kube } from '../lab/toolkit/kube.ts';
import { useLab } from './support/lab.ts';

const lab = useLab();
const home = mkdtempSync(join(tmpdir(), 'gwlab-keep-'));
const report = mkdtempSync(join(tmpdir(), 'gwlab-keep-report-'));

function node(args: string[], extra: NodeJS.ProcessEnv, timeoutMs: number): Promise<{ code: number; out: string }> {
  // The nested run must not think it is a worker of this one, nor use this run's lab.
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (!k.startsWith('VITEST') && !k.startsWith('GWLAB_SCENARIO') && k !== 'KEEP') env[k] = v;
  }
  Object.assign(env, { GWLAB_HOME: home, GWLAB_REPORT_DIR: report, FORCE_COLOR: '0' }, extra);
  return new Promise((resolve) =>
    execFile(process.execPath, args, { cwd: REPO_ROOT, env, timeout: timeoutMs, maxBuffer: 64 << 20 }, (err, so, se) =>
      resolve({ code: err ? Number(err.code ?? 1) : 0, out: stripVTControlCharacters(`${so}\n${se}`) }),
    ),
  );
}

const runOneScenario = () =>
  node(
    [
      join(REPO_ROOT, 'node_modules', 'vitest', 'vitest.mjs'),
      'run',
      '--project',
      'scenarios',
      'scenarios/00-lab.test.ts',
    ],
    { KEEP: '1' },
    180_000,
  );

/** Processes whose command line or environment names the temporary home (the lab process and its pods). */
function processesOfHome(): string[] {
  const out: string[] = [];
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
      const env = readFileSync(`/proc/${pid}/environ`, 'utf8');
      if (cmd.includes(home) || env.includes(`GWLAB_HOME=${home}`)) out.push(`${pid} ${cmd}`);
    } catch {}
  }
  return out;
}

describe.skipIf(lab.backend !== 'embedded')('KEEP=1 keeps the lab of a scenario run alone', () => {
  afterAll(async () => {
    await labDown({ name: 'scenarios', home, progress: new Progress({ quiet: true }) }).catch(() => undefined);
    rmSync(home, { recursive: true, force: true });
    rmSync(report, { recursive: true, force: true });
  }, 60_000);

  it('one scenario file runs alone; with KEEP=1 its lab stays up, registered as `scenarios`', async () => {
    const r = await runOneScenario();
    expect(r.code, r.out.slice(-3000)).toBe(0);
    expect(r.out).toMatch(/Test Files\s+1 passed \(1\)/);
    expect(r.out).toContain('KEEP=1: lab scenarios is still running');
    expect(r.out).toContain('npm run lab:down -- --name scenarios');
    const rec = readLabRecord('scenarios', home);
    expect(rec, 'the lab record under GWLAB_HOME').toBeDefined();
    // The system is still there to look at.
    const kube = Kube.fromFile(rec!.kubeconfig, String(rec!.context));
    expect((await kube.get('apps/v1', 'Deployment', 'gwvendor', 'gwvendor-system'))?.status?.readyReplicas).toBe(1);
  }, 190_000);

  it('the next KEEP=1 run reuses the kept lab', async () => {
    const before = readLabRecord('scenarios', home);
    const r = await runOneScenario();
    expect(r.code, r.out.slice(-3000)).toBe(0);
    expect(readLabRecord('scenarios', home)?.pid).toBe(before?.pid);
  }, 190_000);

  it('a plain lab:down -- --name scenarios removes it and leaves no process', async () => {
    expect(processesOfHome().length).toBeGreaterThan(0);
    const r = await node([join(REPO_ROOT, 'scripts', 'lab-down.ts'), '--name', 'scenarios'], {}, 60_000);
    expect(r.code, r.out).toBe(0);
    expect(readLabRecord('scenarios', home)).toBeUndefined();
    expect(processesOfHome()).toEqual([]);
  }, 70_000);
});
