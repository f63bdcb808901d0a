// `node scripts/bundle-deps.ts [--force]` (npm's postinstall runs it): bundles each package of BUNDLED
// (below; system/shared/dep-bundles.ts says why) into node_modules/.cache/gwlab/deps/ and writes the manifest that
// useDependencyBundles() reads. rolldown (installed with vite, a dev dependency): one build per package, its entries
// as inputs (shared code in shared chunks, so each module exists once), comments and white space dropped, names kept;
// the package's dependencies stay imports, resolved from node_modules as the package itself resolves them (a package
// whose dependency npm nested under it is not bundled: the bundle could load another version). CommonJS packages
// stay CommonJS (their `require`s and `__dirname`s keep meaning what they meant: __dirname and __filename become the
// original file's), with a line naming module.exports' keys that Node's CommonJS export detection reads, so an ES
// module's named imports of them work as before. Each bundle is then loaded in a child process and compared with the
// package (the same export names, the same module.exports keys); one that differs or does not load is dropped.
// Exits 0 without bundles when rolldown is not installed (an install without dev dependencies) or anything fails:
// an install must not fail for want of a faster start; the packages then load from their folders, as before.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { createRequire, isBuiltin } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MODEL_SCHEMAS } from '../lab/embedded/apiserver/model-schemas.ts';
import {
  BUNDLE_FORMAT,
  type BundleManifest,
  type BundleRecord,
  bundleDir,
  currentBundles,
  manifestPath,
} from '../system/shared/dep-bundles.ts';
import { writeFileWhole } from '../system/shared/write-whole.ts';

export interface BundledPackage {
  name: string;
  /** How the package's entry files are written (and so its bundle): ES modules or CommonJS. */
  format: 'esm' | 'cjs';
  /** Subpaths bundled as entries ('' = the package itself), each a specifier the project or a dependency imports. */
  entries: string[];
}

/**
 * What is bundled. Only packages whose modules every importer reaches through these entries: a module of the
 * package loaded from its folder as well would be a second copy (scripts/bundle-deps.test.ts checks the processes).
 */
export const BUNDLED: readonly BundledPackage[] = [
  { name: '@kubernetes/client-node', format: 'esm', entries: ['', 'dist/serializer.js'] },
  { name: 'undici', format: 'cjs', entries: [''] },
  { name: 'yaml', format: 'cjs', entries: [''] },
  { name: '@grpc/grpc-js', format: 'cjs', entries: [''] },
  { name: '@grpc/proto-loader', format: 'cjs', entries: [''] },
  { name: 'protobufjs', format: 'cjs', entries: [''] },
  { name: 'node-forge', format: 'cjs', entries: [''] },
  {
    name: 'kubernetes-models',
    format: 'esm',
    entries: [
      'v1',
      'apps/v1',
      'rbac.authorization.k8s.io/v1',
      ...Object.values(MODEL_SCHEMAS).map((m) => `_schemas/${m}`),
    ],
  },
  { name: '@bufbuild/cel', format: 'esm', entries: ['', 'ext'] },
  { name: '@bufbuild/re2', format: 'esm', entries: [''] },
  { name: '@bufbuild/protobuf', format: 'esm', entries: ['', 'reflect', 'wire', 'wkt', 'codegenv2'] },
  // The control plane's metrics, and what it requires (@opentelemetry/api: 51 files; an ES importer of it would get
  // its .mjs build, not bundled, as without bundles).
  { name: 'prom-client', format: 'cjs', entries: [''] },
  { name: '@opentelemetry/api', format: 'cjs', entries: [''] },
  // What client-node's bundle imports at load, though only some of its paths use them.
  { name: 'jose', format: 'esm', entries: ['', 'errors', 'jwe/compact/decrypt'] },
  { name: 'openid-client', format: 'esm', entries: [''] },
  { name: 'oauth4webapi', format: 'esm', entries: [''] },
  { name: 'socks', format: 'cjs', entries: [''] },
  { name: 'ip-address', format: 'cjs', entries: [''] },
  { name: 'tar-stream', format: 'cjs', entries: [''] },
];

const say = (msg: string) => process.stdout.write(`bundle-deps: ${msg}\n`);
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const requireHere = createRequire(join(ROOT, 'package.json'));

/** The specifier of one entry: the package or one of its subpaths. */
export const specifierOf = (name: string, sub: string) => (sub ? `${name}/${sub}` : name);

/** The file Node loads for a specifier, as an ES module importer or a CommonJS one sees it. */
function entryFile(spec: string, format: BundledPackage['format']): string {
  return format === 'esm' ? fileURLToPath(import.meta.resolve(spec)) : requireHere.resolve(spec);
}

type Rolldown = typeof import('rolldown');

/** Bundles one package into `out`; its record, or a reason it was not bundled. */
async function bundleOne(rolldown: Rolldown, p: BundledPackage, nodeModules: string, out: string) {
  const packageDir = join(nodeModules, p.name);
  const pkgJson = join(packageDir, 'package.json');
  if (!existsSync(pkgJson)) return `${p.name} is not installed at ${packageDir}`;
  const pkg = JSON.parse(readFileSync(pkgJson, 'utf8'));
  const deps = Object.keys({ ...pkg.dependencies, ...pkg.peerDependencies, ...pkg.optionalDependencies }).filter(
    (d) => !d.startsWith('@types/'),
  );
  const nested = deps.filter((d) => existsSync(join(packageDir, 'node_modules', d)));
  if (nested.length)
    return `npm installed ${nested.join(', ')} under ${packageDir}; the bundle would load another copy`;
  const inputs: Record<string, string> = {};
  p.entries.forEach((sub, i) => {
    inputs[`entry${i}`] = entryFile(specifierOf(p.name, sub), p.format);
  });
  const ext = p.format === 'esm' ? 'mjs' : 'cjs';
  const ownName = (id: string) => id === p.name || id.startsWith(`${p.name}/`);
  const bare = (id: string) => !id.startsWith('.') && !id.startsWith('/') && !id.startsWith('\0');
  const build = await rolldown.rolldown({
    input: inputs,
    platform: 'node',
    logLevel: 'silent',
    external: (id) => isBuiltin(id) || (bare(id) && !ownName(id)),
    plugins:
      p.format === 'cjs'
        ? [
            {
              name: 'original-dirname',
              transform(code, id) {
                if (!/__dirname|__filename/.test(code)) return null;
                return code
                  .replace(/\b__dirname\b/g, JSON.stringify(dirname(id)))
                  .replace(/\b__filename\b/g, JSON.stringify(id));
              },
            },
          ]
        : [],
  });
  const result = await build.write({
    dir: out,
    format: p.format,
    entryFileNames: `[name].${ext}`,
    chunkFileNames: `chunk-[hash].${ext}`,
    // What several entries of an ES package share goes into one chunk rather than one per combination of entries
    // that share it: kubernetes-models' 23 entries had 17 chunks, a module each to resolve and link at every lab
    // start. (A CommonJS package keeps its entry whole: a facade over a chunk would hide its exports from Node.)
    ...(p.format === 'esm' && p.entries.length > 1
      ? { codeSplitting: { groups: [{ name: 'shared', test: /./ }] } }
      : {}),
    minify: { compress: false, mangle: false },
  });
  await build.close();
  const modules = new Set<string>();
  for (const o of result.output)
    if (o.type === 'chunk') for (const id of o.moduleIds) if (id.startsWith(`${packageDir}/`)) modules.add(id);
  const entries: Record<string, string> = {};
  for (const [name, file] of Object.entries(inputs)) {
    const bundled = join(out, `${name}.${ext}`);
    // Node detects a CommonJS module's named exports from its source; a bundle's are behind a function call.
    if (p.format === 'cjs') {
      const keys = Object.keys(requireHere(file)).filter((k) => /^[A-Za-z_$][\w$]*$/.test(k) && k !== 'default');
      writeFileWhole(bundled, `${readFileSync(bundled, 'utf8')}\n0 && (module.exports = { ${keys.join(', ')} });\n`);
    }
    entries[file] = bundled;
  }
  const record: BundleRecord = {
    version: String(pkg.version),
    packageJsonMtimeMs: statSync(pkgJson).mtimeMs,
    packageDir,
    format: p.format,
    entries,
    modules: [...modules].sort(),
  };
  return record;
}

/** A child's view of each entry: its export names and, for CommonJS, module.exports' keys. */
const PROBE = `
const { useDependencyBundles } = await import(process.env.PROBE_BUNDLES);
if (process.env.PROBE_USE === '1' && useDependencyBundles() === 0) throw new Error('no bundles in use');
const out = {};
for (const spec of JSON.parse(process.env.PROBE_SPECS)) {
  const ns = await import(spec);
  const d = ns.default;
  out[spec] = { names: Object.keys(ns).sort(), defaultKeys: d && typeof d === 'object' ? Object.keys(d).sort() : typeof d };
}
console.log(JSON.stringify(out));`;

function probe(specs: string[], use: boolean): Promise<Record<string, { names: string[]; defaultKeys: unknown }>> {
  return new Promise((resolve, reject) =>
    execFile(
      process.execPath,
      ['--input-type=module', '-e', PROBE],
      {
        cwd: ROOT,
        env: {
          ...process.env,
          GWLAB_DEP_BUNDLES: use ? '1' : '0',
          PROBE_USE: use ? '1' : '0',
          PROBE_SPECS: JSON.stringify(specs),
          PROBE_BUNDLES: new URL('../system/shared/dep-bundles.ts', import.meta.url).href,
        },
        maxBuffer: 64 << 20,
      },
      (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(JSON.parse(stdout))),
    ),
  );
}

/** Packages whose bundle does not export what the package does (names missing, module.exports keys differing). */
async function differing(manifest: BundleManifest): Promise<Map<string, string>> {
  const specs = BUNDLED.filter((p) => manifest.packages[p.name]).flatMap((p) =>
    p.entries.map((s) => specifierOf(p.name, s)),
  );
  const bad = new Map<string, string>();
  const owner = (spec: string) => BUNDLED.find((p) => spec === p.name || spec.startsWith(`${p.name}/`))!.name;
  const [plain, bundled] = await Promise.all([probe(specs, false), probe(specs, true)]);
  for (const spec of specs) {
    const a = plain[spec];
    const b = bundled[spec];
    const missing = a.names.filter((n) => !b.names.includes(n));
    if (missing.length) bad.set(owner(spec), `${spec}: exports ${missing.slice(0, 5).join(', ')} missing`);
    else if (JSON.stringify(a.defaultKeys) !== JSON.stringify(b.defaultKeys))
      bad.set(owner(spec), `${spec}: its default export differs`);
  }
  return bad;
}

export async function bundleDeps(opts: { force?: boolean } = {}): Promise<BundleManifest | undefined> {
  const dir = bundleDir();
  if (!dir) {
    say('no node_modules; nothing to bundle');
    return undefined;
  }
  if (!opts.force && existsSync(manifestPath(dir))) {
    const m = JSON.parse(readFileSync(manifestPath(dir), 'utf8')) as BundleManifest;
    // Kept when every package it holds is still the one bundled (what the hook itself checks).
    if (m.format === BUNDLE_FORMAT && currentBundles(dir).length === Object.keys(m.packages).length) return m;
  }
  let rolldown: Rolldown;
  try {
    rolldown = await import('rolldown');
  } catch {
    say('rolldown is not installed (no dev dependencies?); the packages load from their folders');
    return undefined;
  }
  const started = performance.now();
  const nodeModules = dirname(dirname(dirname(dir))); // node_modules/.cache/gwlab/deps
  const staging = `${dir}.${process.pid}.tmp`;
  rmSync(staging, { recursive: true, force: true });
  const manifest: BundleManifest = { format: BUNDLE_FORMAT, packages: {} };
  let moduleCount = 0;
  for (const p of BUNDLED) {
    const sub = p.name.replace('/', '+');
    const r = await bundleOne(rolldown, p, nodeModules, join(staging, sub)).catch((e: Error) => e.message);
    if (typeof r === 'string') {
      say(`${p.name} not bundled: ${r}`);
      continue;
    }
    // Paths as they will be once the staging folder is renamed.
    for (const k of Object.keys(r.entries))
      r.entries[k] = join(dir, sub, r.entries[k].slice(join(staging, sub).length + 1));
    manifest.packages[p.name] = r;
    moduleCount += r.modules.length;
  }
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dirname(dir), { recursive: true });
  renameSync(staging, dir);
  writeFileWhole(manifestPath(dir), JSON.stringify(manifest, null, 1));
  const bad = await differing(manifest).catch((e: Error) => new Map([['*', e.message]]));
  for (const [name, why] of bad) {
    say(`${name} dropped: ${why}`);
    if (name === '*') manifest.packages = {};
    else delete manifest.packages[name];
  }
  if (bad.size) writeFileWhole(manifestPath(dir), JSON.stringify(manifest, null, 1));
  const n = Object.keys(manifest.packages).length;
  say(`${n} packages (${moduleCount} modules) → ${dir} (${Math.round(performance.now() - started)} ms)`);
  return manifest;
}

if (import.meta.main) {
  try {
    await bundleDeps({ force: process.argv.includes('--force') });
  } catch (err) {
    say(`not bundled: ${err instanceof Error ? err.message : String(err)}`);
  }
}
