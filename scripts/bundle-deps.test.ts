// The dependency bundles (system/shared/dep-bundles.ts, built by scripts/bundle-deps.ts on `npm ci`): a process
// started the way the tools are (scripts/preload.mjs) loads every bundled package from its bundle, with the exports
// the package has; the modules of the proxy, the control plane, the lab process and a tool load no module of a
// bundled package a second time from its folder; a package reinstalled since it was bundled, or GWLAB_DEP_BUNDLES=0,
// loads from its folder.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import {
  BUNDLE_FORMAT,
  type BundleManifest,
  bundleDir,
  currentBundles,
  manifestPath,
} from '../system/shared/dep-bundles.ts';
import { BUNDLED, specifierOf } from './bundle-deps.ts';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const PRELOAD = join(ROOT, 'scripts', 'preload.mjs');
const SPECS = BUNDLED.flatMap((p) => p.entries.map((s) => specifierOf(p.name, s)));
/** Each specifier with how its package is consumed: an ES module's by import, a CommonJS one's by require. */
const CONSUMED = BUNDLED.flatMap((p) => p.entries.map((s) => [specifierOf(p.name, s), p.format]));

/** Runs an ES module program in a process started as the tools are; its stdout as JSON. */
function run(program: string, env: NodeJS.ProcessEnv = {}): Promise<any> {
  return new Promise((resolve, reject) =>
    execFile(
      process.execPath,
      ['--import', PRELOAD, '--input-type=module', '-e', program],
      { cwd: ROOT, env: { ...process.env, ...env }, maxBuffer: 64 << 20 },
      (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(JSON.parse(stdout))),
    ),
  );
}

/** Where each bundled specifier resolves, its export names, and what a KubeConfig and the serializer do. */
const PROBE = `
const out = { urls: {}, names: {} };
const { createRequire } = await import('node:module');
const { pathToFileURL } = await import('node:url');
const require = createRequire(${JSON.stringify(join(ROOT, 'package.json'))});
for (const [spec, format] of ${JSON.stringify(CONSUMED)}) {
  out.urls[spec] = format === 'esm' ? import.meta.resolve(spec) : pathToFileURL(require.resolve(spec)).href;
  out.names[spec] = Object.keys(format === 'esm' ? await import(spec) : require(spec)).sort();
}
out.sameUndici = require('undici') === (await import('undici')).default;
const k8s = await import('@kubernetes/client-node');
const ser = await import('@kubernetes/client-node/dist/serializer.js');
const kc = new k8s.KubeConfig();
kc.loadFromString(JSON.stringify({ clusters: [{ name: 'c', cluster: { server: 'https://127.0.0.1:6443' } }],
  users: [{ name: 'u', user: { token: 't' } }], contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
  'current-context': 'x' }));
out.server = kc.getCurrentCluster().server;
// protobufjs/ext/descriptor (outside the bundle) patches the Root of the protobufjs the bundles use: proto-loader works.
const protoLoader = await import('@grpc/proto-loader');
out.echoService = Object.keys(protoLoader.loadSync(${JSON.stringify(join(ROOT, 'system', 'echo', 'grpcecho.proto'))}, { keepCase: true }));
out.crd = ser.ObjectSerializer.serialize({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition',
  spec: { group: 'g' } }, 'V1CustomResourceDefinition').spec.group;
console.log(JSON.stringify(out));`;

describe('the dependency bundles', () => {
  const dir = bundleDir()!;

  it('exist after npm ci for every bundled package, each matching its installed package', () => {
    const names = currentBundles(dir).map(
      (r) => r.version && r.packageDir.slice(join(ROOT, 'node_modules').length + 1),
    );
    expect(names.sort(), `missing ones: run node scripts/bundle-deps.ts (npm ci runs it)`).toEqual(
      BUNDLED.map((p) => p.name).sort(),
    );
  });

  it('are what a tool loads, exporting what each package exports; GWLAB_DEP_BUNDLES=0 loads the packages', async () => {
    const [bundled, plain] = await Promise.all([run(PROBE), run(PROBE, { GWLAB_DEP_BUNDLES: '0' })]);
    for (const spec of SPECS) {
      expect(bundled.urls[spec], spec).toContain('/node_modules/.cache/gwlab/deps/');
      expect(plain.urls[spec], spec).not.toContain('/.cache/');
      // A CommonJS bundle may name more of module.exports' keys than Node detected in the package's own source.
      expect(
        plain.names[spec].filter((n: string) => !bundled.names[spec].includes(n)),
        spec,
      ).toEqual([]);
    }
    expect(bundled.names['@kubernetes/client-node'].length).toBeGreaterThan(800);
    expect(bundled.sameUndici).toBe(true);
    expect(bundled.echoService).toEqual(plain.echoService);
    expect(bundled.echoService.length).toBeGreaterThan(0);
    expect([bundled.server, bundled.crd, plain.server, plain.crd]).toEqual([
      'https://127.0.0.1:6443',
      'g',
      'https://127.0.0.1:6443',
      'g',
    ]);
  });

  it('leave no module of a bundled package to load a second time (proxy, control plane, lab process, a tool)', async () => {
    const loaded = await run(
      `
      await import('./system/proxy/main.ts');
      await import('./system/controlplane/main.ts');
      await import('./lab/embedded/cluster.ts');
      await import('./lab/tools/explain/explain.ts');
      const b = await import('./system/shared/dep-bundles.ts');
      console.log(JSON.stringify(b.secondCopiesLoaded()));`,
      { GWLAB_DEP_BUNDLES_CHECK: '1' },
    );
    expect(loaded).toEqual([]);
  });

  describe('a package reinstalled since it was bundled', () => {
    const tmp = mkdtempSync(join(tmpdir(), 'gwlab-deps-'));
    afterAll(() => rmSync(tmp, { recursive: true, force: true }));

    it('loads from its folder; the others keep their bundles; another format uses none', () => {
      const pkg = (name: string) => {
        const d = join(tmp, name);
        mkdirSync(d, { recursive: true });
        writeFileSync(join(d, 'package.json'), '{}');
        utimesSync(join(d, 'package.json'), 1000, 1000);
        return d;
      };
      const rec = (name: string, mtime: number) => ({
        version: '1',
        packageJsonMtimeMs: mtime,
        packageDir: pkg(name),
        format: 'cjs' as const,
        entries: {},
        modules: [],
      });
      const m: BundleManifest = { format: BUNDLE_FORMAT, packages: { a: rec('a', 1_000_000), b: rec('b', 5) } };
      writeFileSync(manifestPath(tmp), JSON.stringify(m));
      expect(currentBundles(tmp).map((r) => r.packageDir)).toEqual([join(tmp, 'a')]);
      writeFileSync(manifestPath(tmp), JSON.stringify({ ...m, format: BUNDLE_FORMAT - 1 }));
      expect(currentBundles(tmp)).toEqual([]);
    });
  });
});
