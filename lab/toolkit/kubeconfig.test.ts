// How a tool picks its cluster (kubeconfig.ts): kubectl's precedence (--kubeconfig > KUBECONFIG merged > ~/.kube/config,
// --context over current-context), checked against the real kubectl 1.32 on the same files, plus gwlab's labs
// (--name beats KUBECONFIG; with nothing set, the default lab, then ~/.kube/config). Temporary files only.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { writeLabRecord } from '../state.ts';
import { kubeconfigOfContext, resolveKubeconfig } from './kubeconfig.ts';

const tmp = mkdtempSync(join(tmpdir(), 'gwlab-kubeconfig-test-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** A kubeconfig with one cluster per entry (server on port `port`), its context and user of the same name. */
function kubeconfig(
  file: string,
  entries: { name: string; port: number; cluster?: string }[],
  current?: string,
): string {
  const path = join(tmp, file);
  mkdirSync(join(path, '..'), { recursive: true });
  const clusters = entries.map(
    (e) => `{name: ${e.cluster ?? e.name}, cluster: {server: "https://127.0.0.1:${e.port}"}}`,
  );
  const contexts = entries.map((e) => `{name: ${e.name}, context: {cluster: ${e.cluster ?? e.name}, user: ${e.name}}}`);
  const users = entries.map((e) => `{name: ${e.name}, user: {token: t-${e.name}}}`);
  writeFileSync(
    path,
    `apiVersion: v1
kind: Config
clusters: [${clusters.join(', ')}]
contexts: [${contexts.join(', ')}]
users: [${users.join(', ')}]
${current ? `current-context: ${current}\n` : ''}`,
  );
  return path;
}

// a and b both name cluster `shared` (a wins it) and b names `ctx-b`; a's current-context comes first.
const a = kubeconfig('a.yaml', [
  { name: 'ctx-a', port: 1001 },
  { name: 'both-a', port: 1111, cluster: 'shared' },
]);
const aWithCurrent = kubeconfig('a-current.yaml', [{ name: 'ctx-a2', port: 1001 }], 'ctx-a2');
const b = kubeconfig(
  'b.yaml',
  [
    { name: 'ctx-b', port: 1002 },
    { name: 'both-b', port: 2222, cluster: 'shared' },
  ],
  'ctx-b',
);
const home = join(tmp, 'gwlab-home');
const userHome = join(tmp, 'user');
const labFile = kubeconfig('gwlab-home/gwlab/kubeconfig', [{ name: 'gwlab-gwlab', port: 3001 }], 'gwlab-gwlab');
const meFile = kubeconfig('gwlab-home/me/kubeconfig', [{ name: 'gwlab-me', port: 3002 }], 'gwlab-me');
writeLabRecord({ name: 'gwlab', index: 0, backend: 'embedded', kubeconfig: labFile, context: 'gwlab-gwlab' }, home);
writeLabRecord({ name: 'me', index: 1, backend: 'embedded', kubeconfig: meFile, context: 'gwlab-me' }, home);

const server = (r: ReturnType<typeof resolveKubeconfig>) => r.kc.getCurrentCluster()?.server;

/** What kubectl makes of the same inputs: the context it would use and that context's server. */
function kubectl(env: Record<string, string>, flags: string[]): { context: string; server: string } {
  const out = execFileSync('kubectl', ['config', 'view', '--minify', '-o', 'json', ...flags], {
    env: { PATH: process.env.PATH ?? '', HOME: userHome, ...env },
    encoding: 'utf8',
  });
  const v = JSON.parse(out);
  return { context: v['current-context'], server: v.clusters[0].cluster.server };
}

describe('resolveKubeconfig: kubectl precedence', () => {
  const cases: { what: string; env: Record<string, string>; flags: { kubeconfig?: string; context?: string } }[] = [
    { what: 'KUBECONFIG list: the first current-context', env: { KUBECONFIG: `${aWithCurrent}:${b}` }, flags: {} },
    {
      what: 'KUBECONFIG list: a later file sets it when the first does not',
      env: { KUBECONFIG: `${a}:${b}` },
      flags: {},
    },
    {
      what: 'KUBECONFIG list: the first file to name a cluster keeps it',
      env: { KUBECONFIG: `${a}:${b}` },
      flags: { context: 'both-b' },
    },
    {
      what: 'KUBECONFIG list: empty entries and missing files are skipped',
      env: { KUBECONFIG: `::${join(tmp, 'missing.yaml')}:${b}` },
      flags: {},
    },
    { what: '--kubeconfig beats KUBECONFIG', env: { KUBECONFIG: b }, flags: { kubeconfig: aWithCurrent } },
    { what: '--context beats current-context', env: { KUBECONFIG: `${b}:${a}` }, flags: { context: 'ctx-a' } },
  ];
  for (const c of cases) {
    it(`${c.what}, as kubectl does`, () => {
      const r = resolveKubeconfig({ ...c.flags, home: join(tmp, 'no-labs'), env: { ...c.env, HOME: userHome } });
      const k = kubectl(c.env, [
        ...(c.flags.kubeconfig ? ['--kubeconfig', c.flags.kubeconfig] : []),
        ...(c.flags.context ? ['--context', c.flags.context] : []),
      ]);
      expect({ context: r.context, server: server(r) }).toEqual(k);
    });
  }

  it('the merged cluster of two files is the first one whole', () => {
    const r = resolveKubeconfig({ context: 'both-b', home, env: { KUBECONFIG: `${a}:${b}`, HOME: userHome } });
    expect(r).toMatchObject({ source: 'KUBECONFIG', files: [a, b], context: 'both-b' });
    expect(server(r)).toBe('https://127.0.0.1:1111');
    expect(r.kc.getCurrentUser()?.token).toBe('t-both-b');
  });

  it('errors as kubectl does: a missing --kubeconfig, an unknown --context, no current-context', () => {
    const env = { HOME: userHome };
    expect(() => resolveKubeconfig({ kubeconfig: join(tmp, 'nope.yaml'), home, env })).toThrow(
      `--kubeconfig ${join(tmp, 'nope.yaml')}: no such file`,
    );
    expect(() => resolveKubeconfig({ kubeconfig: b, context: 'nope', home, env })).toThrow(
      `context nope is not in ${b}; its contexts: ctx-b, both-b`,
    );
    expect(() => resolveKubeconfig({ kubeconfig: a, home, env })).toThrow(`current-context is not set in ${a}`);
    expect(() => resolveKubeconfig({ home, env: { ...env, KUBECONFIG: join(tmp, 'nope.yaml') } })).toThrow(
      'none of its files exists',
    );
  });
});

describe('resolveKubeconfig: the labs', () => {
  it('--name means that lab, above KUBECONFIG; --context still picks the context', () => {
    const r = resolveKubeconfig({ name: 'me', home, env: { KUBECONFIG: b, HOME: userHome } });
    expect(r).toMatchObject({ source: '--name', files: [meFile], context: 'gwlab-me' });
    expect(r.rec?.name).toBe('me');
    expect(() => resolveKubeconfig({ name: 'me', context: 'ctx-b', home, env: {} })).toThrow(
      `context ctx-b is not in ${meFile}`,
    );
    expect(() => resolveKubeconfig({ name: 'nobody', home, env: {} })).toThrow(
      `--name nobody: no lab named nobody under ${home}; start one with: npm run lab:up -- --name nobody`,
    );
  });

  it('--name with --kubeconfig is two clusters: an error', () => {
    expect(() => resolveKubeconfig({ name: 'me', kubeconfig: b, home, env: {} })).toThrow(
      `--name me and --kubeconfig ${b} each pick a cluster: give one`,
    );
  });

  it('nothing given: KUBECONFIG if set, else the default lab, else ~/.kube/config, else an error naming all', () => {
    const env = { KUBECONFIG: b, HOME: userHome };
    expect(resolveKubeconfig({ home, env })).toMatchObject({ source: 'KUBECONFIG', context: 'ctx-b' });
    expect(resolveKubeconfig({ home, env: { KUBECONFIG: '', HOME: userHome } })).toMatchObject({
      source: 'default lab',
      context: 'gwlab-gwlab',
      rec: { name: 'gwlab' },
    });
    const noLabs = join(tmp, 'no-labs');
    expect(() => resolveKubeconfig({ home: noLabs, env: { HOME: userHome } })).toThrow(
      `no cluster to talk to: no --kubeconfig, --name or KUBECONFIG, no lab gwlab under ${noLabs} and no ${join(userHome, '.kube', 'config')}`,
    );
    const userConfig = kubeconfig('user/.kube/config', [{ name: 'mine', port: 4001 }], 'mine');
    try {
      expect(resolveKubeconfig({ home: noLabs, env: { HOME: userHome } })).toMatchObject({
        source: '~/.kube/config',
        files: [userConfig],
        context: 'mine',
      });
    } finally {
      rmSync(userConfig);
    }
  });

  it("a KUBECONFIG that holds a lab's context and server is that lab", () => {
    const r = resolveKubeconfig({ home, env: { KUBECONFIG: `${b}:${meFile}`, HOME: userHome }, context: 'gwlab-me' });
    expect(r.source).toBe('KUBECONFIG');
    expect(r.rec?.name).toBe('me');
    expect(resolveKubeconfig({ home, env: { KUBECONFIG: b, HOME: userHome } }).rec).toBeUndefined();
  });
});

describe('lab:up --cluster existing: kubectl rules alone, one context kept', () => {
  it('skips the default lab (kubectlOnly) and copies only the chosen context, which kubectl reads back', () => {
    const env = { HOME: userHome };
    // With a default lab present and nothing else set, the tools use the lab; `existing` must not (it is not a lab).
    expect(() => resolveKubeconfig({ home, env, kubectlOnly: true })).toThrow(/no cluster to talk to/);

    const r = resolveKubeconfig({
      home,
      env: { ...env, KUBECONFIG: `${a}:${b}` },
      context: 'ctx-b',
      kubectlOnly: true,
    });
    const copy = join(tmp, 'existing-copy.json');
    writeFileSync(copy, kubeconfigOfContext(r));
    const view = JSON.parse(
      execFileSync('kubectl', ['config', 'view', '--raw', '-o', 'json', `--kubeconfig=${copy}`], { encoding: 'utf8' }),
    );
    expect(view['current-context']).toBe('ctx-b');
    expect(view.contexts.map((c: { name: string }) => c.name)).toEqual(['ctx-b']);
    expect(view.clusters).toEqual([{ name: 'ctx-b', cluster: { server: 'https://127.0.0.1:1002' } }]);
    expect(view.users).toEqual([{ name: 'ctx-b', user: { token: 't-ctx-b' } }]);
  });
});
