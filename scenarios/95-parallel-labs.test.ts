// Scenarios run side by side on labs of their own (issue 14): a nested run, the way `npm test` runs a project
// (scripts/test.ts), of two rendezvous fixture files with GWLAB_SCENARIO_LABS=2. Each file notes the lab it got and
// waits for the other's note, so both pass only when they run at the same time; they must have got different labs
// (different API servers), and the run's one report must say which lab ran each file: files.json, summary.html, and
// one JUnit file and one vitest.json holding both. The run's workers load their modules through the machine's compile
// cache (lab/compile-cache.ts; Node's NODE_COMPILE_CACHE, https://nodejs.org/api/module.html#module-compile-cache),
// which scripts/test.ts turns on. Nothing of the nested run may outlive it: its labs are down after.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../lab/install.ts';
import type { FileTiming } from '../lab/report/files-reporter.ts';
import type { RendezvousNote } from './support/fixtures/rendezvous.ts';

const work = mkdtempSync(join(tmpdir(), 'gwlab-parallel-'));
const reports = join(work, 'reports');
const notes = join(work, 'notes');

/** Live processes whose environment names this test's report folder (the nested run, its labs and their pods). */
function processesOfRun(): string[] {
  const out: string[] = [];
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    if (Number(pid) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${pid}/environ`, 'utf8').includes(`GWLAB_REPORTS=${reports}`)) {
        out.push(`${pid} ${readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ')}`);
      }
    } catch {}
  }
  return out;
}

describe('scenario files run side by side, each on a lab of its own', () => {
  let run: { code: number; out: string };
  let report: string;

  beforeAll(async () => {
    const env: NodeJS.ProcessEnv = {};
    // The nested run must not think it is a worker of this one, nor use this run's lab or report folder; nor inherit
    // this run's compile cache setting, so that what its workers get is what scripts/test.ts gives them.
    for (const [k, v] of Object.entries(process.env)) {
      if (!/^(VITEST|GWLAB_SCENARIO|GWLAB_REPORT|GWLAB_RUN_ID$|KEEP$|NODE_COMPILE_CACHE$)/.test(k)) env[k] = v;
    }
    Object.assign(env, {
      GWLAB_SCENARIO_LABS: '2',
      GWLAB_REPORTS: reports,
      GWLAB_FIXTURE_FILES: 'rendezvous-a.scenario.ts,rendezvous-b.scenario.ts',
      GWLAB_FIXTURE_DIR: notes,
      FORCE_COLOR: '0',
    });
    mkdirSync(notes, { recursive: true });
    run = await new Promise((resolve) =>
      execFile(
        process.execPath,
        [
          join(REPO_ROOT, 'scripts', 'test.ts'),
          '--config',
          'scenarios/support/fixtures/vitest.config.ts',
          '--project',
          'artifacts-fixture',
        ],
        { cwd: REPO_ROOT, env, timeout: 240_000, maxBuffer: 64 << 20 },
        (err, so, se) =>
          resolve({ code: err ? Number(err.code ?? 1) : 0, out: stripVTControlCharacters(`${so}\n${se}`) }),
      ),
    );
    report = join(reports, 'latest');
  }, 250_000);

  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('both files pass, each having waited for the other', () => {
    expect(run.code, run.out.slice(-4000)).toBe(0);
    expect(run.out.trim().split('\n').at(-1)).toBe('2 passed, 0 failed');
  });

  it('on two different labs: different names, different API servers, different workers', () => {
    const a: RendezvousNote = JSON.parse(readFileSync(join(notes, 'a.json'), 'utf8'));
    const b: RendezvousNote = JSON.parse(readFileSync(join(notes, 'b.json'), 'utf8'));
    expect(a.lab).not.toBe(b.lab);
    expect(a.server).not.toBe(b.server);
    expect(a.pool).not.toBe(b.pool);
  });

  it("loads the workers' modules through the machine's compile cache", () => {
    for (const n of ['a', 'b']) {
      const note: RendezvousNote = JSON.parse(readFileSync(join(notes, `${n}.json`), 'utf8'));
      // Node keeps one subfolder per Node/V8 version under the folder it is given.
      expect(note.compileCache, `rendezvous ${n}`).toContain(join(tmpdir(), 'node-compile-cache'));
    }
  });

  it('one report for the run says which lab ran each file', () => {
    const a: RendezvousNote = JSON.parse(readFileSync(join(notes, 'a.json'), 'utf8'));
    const b: RendezvousNote = JSON.parse(readFileSync(join(notes, 'b.json'), 'utf8'));
    const files: FileTiming[] = JSON.parse(readFileSync(join(report, 'files.json'), 'utf8'));
    const byName = (n: string) => files.find((f) => f.file.endsWith(`rendezvous-${n}.scenario.ts`));
    expect(byName('a')).toMatchObject({ lab: a.lab, worker: Number(a.pool), state: 'passed' });
    expect(byName('b')).toMatchObject({ lab: b.lab, worker: Number(b.pool), state: 'passed' });
    const html = readFileSync(join(report, 'summary.html'), 'utf8');
    expect(html).toContain(`lab ${a.lab} · worker ${a.pool}`);
    expect(html).toContain(`lab ${b.lab} · worker ${b.pool}`);
    const junit = readFileSync(join(report, 'junit.xml'), 'utf8');
    expect(junit.match(/<testsuites /g)?.length).toBe(1);
    expect(junit).toContain('rendezvous-a.scenario.ts');
    expect(junit).toContain('rendezvous-b.scenario.ts');
    const json = JSON.parse(readFileSync(join(report, 'vitest.json'), 'utf8'));
    expect(json.numPassedTests).toBe(2);
  });

  it('leaves no process of the nested run behind', () => {
    expect(processesOfRun()).toEqual([]);
  });
});
