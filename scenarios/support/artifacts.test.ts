// The failure-artifact hook end to end: a nested vitest runs a deliberately failing scenario (fixtures/) with the
// scenario project's own global setup and setupFiles, against this lab, into a report folder of its own. Each failure
// must leave a folder under artifacts/ that holds every item of the list, recorded in artifacts/index.json
// under the names vitest's JSON report gives the failed tests (what summary.html links).
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../lab/install.ts';
import { uniqueName, useLab } from './lab.ts';

const lab = useLab();
const fixtureNs = uniqueName('artifacts-fixture');
const report = mkdtempSync(join(tmpdir(), 'gwlab-artifacts-report-'));

interface Nested {
  code: number;
  out: string;
  json: any;
  index: Record<string, string>;
}

function runFixture(): Promise<Nested> {
  // The nested run must not think it is a worker of this one.
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('VITEST') && k !== 'KEEP') env[k] = v;
  Object.assign(env, {
    GWLAB_SCENARIO_KUBECONFIG: lab.kubeconfig,
    GWLAB_SCENARIO_CONTEXT: lab.context,
    GWLAB_SCENARIO_LAB: lab.name,
    GWLAB_REPORT_DIR: report,
    GWLAB_FIXTURE_NAMESPACE: fixtureNs,
    FORCE_COLOR: '0',
  });
  const child = spawn(
    process.execPath,
    [
      join(REPO_ROOT, 'node_modules', 'vitest', 'vitest.mjs'),
      'run',
      '--config',
      'scenarios/support/fixtures/vitest.config.ts',
      '--reporter=default',
      '--reporter=json',
      `--outputFile.json=${join(report, 'vitest.json')}`,
    ],
    { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  return new Promise((resolve) =>
    child.on('exit', (code) => {
      const read = (f: string) => (existsSync(f) ? JSON.parse(readFileSync(f, 'utf8')) : undefined);
      resolve({
        code: code ?? 1,
        out,
        json: read(join(report, 'vitest.json')),
        index: read(join(report, 'artifacts', 'index.json')) ?? {},
      });
    }),
  );
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => statSync(join(dir, f)).isFile())
    .sort();
}

interface FixtureState {
  namespace: string;
  /** `<ns>/<pod>` of every pod in the collected namespaces while the fixture ran. */
  pods: string[];
  proxyPods: string[];
}

/**
 * The list, checked by content so that it does not depend on how collect.ts names its files: resources with
 * their statuses, events, logs of every pod, /snapshots/krt, /snapshots/xds, and config_dump?include_eds plus
 * stats/prometheus and /certs of every proxy. Returns what is missing.
 */
function missingItems(dir: string, st: FixtureState): string[] {
  const files = filesUnder(dir).map((f) => ({ path: f, text: readFileSync(join(dir, f), 'utf8') }));
  const any = (what: string, pred: (f: { path: string; text: string }) => boolean) => (files.some(pred) ? [] : [what]);
  const ns = st.namespace;
  const role = `gwvendor-kube-gateway-api~${ns}~gw`;
  return [
    ...any(
      'the HTTPRoute with its status',
      (f) => /HTTPRoute/.test(f.text) && f.text.includes(ns) && /parents/.test(f.text),
    ),
    ...any(
      'the Gateway with its status',
      (f) => /Gateway/.test(f.text) && f.text.includes(ns) && /Programmed/.test(f.text),
    ),
    ...any('events', (f) => f.text.includes(`Successfully assigned ${ns}/`)),
    ...st.pods.flatMap((p) =>
      any(`logs of pod ${p}`, (f) => /log/i.test(f.path) && f.path.includes(p.split('/')[1]) && f.text.length > 0),
    ),
    ...any('/snapshots/krt', (f) => /krt/i.test(f.path) && f.text.includes(ns)),
    ...any('/snapshots/xds', (f) => /xds/i.test(f.path) && f.text.includes(role)),
    ...st.proxyPods.flatMap((p) => [
      ...any(
        `config_dump?include_eds of proxy ${p}`,
        (f) => f.path.includes(p) && f.text.includes('EndpointsConfigDump'),
      ),
      ...any(`stats/prometheus of proxy ${p}`, (f) => f.path.includes(p) && /^# TYPE envoy_/m.test(f.text)),
      // Issue 12 item 6: the proxy's /certs (Envoy's envoy.admin.v3.Certificates JSON).
      ...any(`/certs of proxy ${p}`, (f) => f.path.includes(p) && /^\{\s*"certificates": \[/.test(f.text)),
    ]),
  ];
}

// The collection is lab/tools/collect.ts (issue 7). Until it is in the tree this test is reported as skipped, not
// passed: the hook then writes only failure.txt and collect-error.txt.
const COLLECTOR = join(REPO_ROOT, 'lab', 'tools', 'collect.ts');

describe.skipIf(!existsSync(COLLECTOR))('failure artifacts', () => {
  let nested: Nested;

  beforeAll(async () => {
    nested = await runFixture();
  }, 240_000);

  afterAll(async () => {
    if (process.env.KEEP !== '1') {
      rmSync(report, { recursive: true, force: true });
      await lab.k(['delete', 'namespace', fixtureNs, '--wait=false', '--ignore-not-found']).catch(() => undefined);
    }
  });

  it('the fixture fails, and each failed test is in artifacts/index.json under its report name', () => {
    expect(nested.code, nested.out).not.toBe(0);
    const failed = (nested.json?.testResults ?? [])
      .flatMap((f: any) => f.assertionResults)
      .filter((a: any) => a.status === 'failed')
      .map((a: any) => a.fullName);
    expect(failed, nested.out).toEqual(['deliberately failing scenario expects a teapot where the route answers 200']);
    expect(Object.keys(nested.index).sort()).toEqual(
      [
        'deliberately failing scenario expects a teapot where the route answers 200',
        'deliberately failing setup',
        'deliberately failing setup never runs',
      ].sort(),
    );
    for (const rel of Object.values(nested.index)) {
      expect(rel).toMatch(/^artifacts\/failing\//);
      expect(existsSync(join(report, rel)), rel).toBe(true);
    }
  });

  it('the failed test folder holds the failure and every collected item', () => {
    const dir = join(
      report,
      nested.index['deliberately failing scenario expects a teapot where the route answers 200'],
    );
    const files = filesUnder(dir);
    expect(readFileSync(join(dir, 'failure.txt'), 'utf8')).toContain('this fixture fails on purpose');
    const error = join(dir, 'collect-error.txt');
    expect(existsSync(error) ? readFileSync(error, 'utf8') : '', 'collect.ts reported no error').toBe('');
    const st: FixtureState = JSON.parse(readFileSync(join(report, 'fixture-state.json'), 'utf8'));
    expect(st.proxyPods.length).toBe(1);
    expect(missingItems(dir, st), `${relative(report, dir)} holds:\n${files.join('\n')}`).toEqual([]);
  });

  it('a failed beforeAll is collected once for its suite, before its cleanup', () => {
    const dir = join(report, nested.index['deliberately failing setup']);
    expect(readFileSync(join(dir, 'failure.txt'), 'utf8')).toContain('fails in beforeAll on purpose');
    expect(existsSync(join(dir, 'collect-error.txt')), 'collect.ts reported no error').toBe(false);
    expect(nested.index['deliberately failing setup never runs']).toBe(nested.index['deliberately failing setup']);
  });
});
