// Dependencies as prebuilt bundles (issue 14). Starting a gwlab process is mostly loading modules, and most of them
// are a few dependencies' own files: @kubernetes/client-node ~870 (every tool, lab:up, the control plane), undici 110,
// yaml 72, @grpc/grpc-js 65 and protobufjs ~40 (every proxy and control plane), kubernetes-models 232 and @bufbuild
// ~130 (the lab process). Each module costs a resolve, a read, a compile-cache lookup and a link: a proxy's start was
// ~0.55 s of CPU, a third of it loading these. `npm ci` bundles each package of BUNDLED once (scripts/bundle-deps.ts:
// rolldown, one build per package, its own dependencies left as imports, code shared by its entries in shared chunks)
// into node_modules/.cache/gwlab/deps/, and a process that calls useDependencyBundles() before it imports them gets
// the bundle wherever Node would have loaded one of the package's entry files: the same code and exports, a few
// modules instead of hundreds. The mapping is by resolved file, not by specifier, so `require('@grpc/grpc-js/')` or a
// relative require of a package's main maps too. A package reinstalled since it was bundled (its package.json
// changed) or a missing manifest falls back to the package; GWLAB_DEP_BUNDLES=0 turns all of it off. Written here
// because no library does "resolve a dependency to a prebuilt bundle of it"; the bundling itself is rolldown's.
import { readFileSync, statSync } from 'node:fs';
import module from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** Bumped when what a bundle holds or the manifest's shape changes: an older manifest is then not used. */
export const BUNDLE_FORMAT = 2;

/** What scripts/bundle-deps.ts wrote for one package. */
export interface BundleRecord {
  version: string;
  /** The package.json's mtime when bundled: another install since then rewrites it, and the bundle is not used. */
  packageJsonMtimeMs: number;
  packageDir: string;
  format: 'esm' | 'cjs';
  /** Entry file of the package (as Node resolves it) → its bundle file. */
  entries: Record<string, string>;
  /** Every file of the package inside the bundle (a module of these loaded from the folder is a second copy). */
  modules: string[];
}

export interface BundleManifest {
  format: number;
  packages: Record<string, BundleRecord>;
}

/**
 * node_modules/.cache/gwlab/deps of the install this file belongs to (undefined outside an install), found from yaml:
 * a runtime dependency that every install has and whose package.json its exports map allows to resolve.
 */
export function bundleDir(): string | undefined {
  let pkgJson: string;
  try {
    pkgJson = fileURLToPath(import.meta.resolve('yaml/package.json'));
  } catch {
    return undefined;
  }
  return join(dirname(dirname(pkgJson)), '.cache', 'gwlab', 'deps'); // node_modules/yaml/package.json
}

export const manifestPath = (dir: string) => join(dir, 'manifest.json');

/** The manifest's packages still matching their installed package.json, or none. */
export function currentBundles(dir = bundleDir()): BundleRecord[] {
  if (!dir) return [];
  let m: BundleManifest;
  try {
    m = JSON.parse(readFileSync(manifestPath(dir), 'utf8'));
  } catch {
    return [];
  }
  if (m.format !== BUNDLE_FORMAT) return [];
  return Object.values(m.packages).filter((r) => {
    try {
      return statSync(join(r.packageDir, 'package.json')).mtimeMs === r.packageJsonMtimeMs;
    } catch {
      return false;
    }
  });
}

let registered: { packages: number } | undefined;
const secondCopies = new Set<string>();

/**
 * Resolves the bundled packages' entry files to their bundles from now on; the number of packages in use. Call it
 * before anything imports them: a module already loaded from a package stays.
 */
export function useDependencyBundles(): number {
  if (registered) return registered.packages;
  if (process.env.GWLAB_DEP_BUNDLES === '0') return 0;
  const records = currentBundles();
  if (records.length === 0) return 0;
  const entries = new Map<string, { url: string; format: 'module' | 'commonjs' }>();
  const inside = new Set<string>();
  const check = process.env.GWLAB_DEP_BUNDLES_CHECK === '1';
  for (const r of records) {
    const format = r.format === 'esm' ? 'module' : 'commonjs';
    for (const [from, to] of Object.entries(r.entries))
      entries.set(pathToFileURL(from).href, { url: pathToFileURL(to).href, format });
    // ~1,800 files: only looked at when checking (a URL each costs ~10 ms of every start).
    if (check) for (const f of r.modules) inside.add(pathToFileURL(f).href);
  }
  registered = { packages: records.length };
  // What can resolve to a bundled package's file: a specifier naming the package, a relative one from a file of the
  // package (one outside the bundle, e.g. protobufjs/ext/descriptor's require('../..'), which must get the bundle to
  // patch the same Root), an absolute one. Every other resolve (builtins, other packages, relative ones among the
  // project's own files) passes straight through: the hook runs for each import and require of the process.
  // GWLAB_DEP_BUNDLES_CHECK=1 looks at every resolved file, to find second copies (the test does).
  const names = records.map((r) => r.packageDir.slice(r.packageDir.lastIndexOf('/node_modules/') + 14));
  const dirUrls = records.map((r) => `${pathToFileURL(r.packageDir).href}/`);
  const namesPackage = (s: string) =>
    names.some((n) => s.startsWith(n) && (s.length === n.length || s[n.length] === '/'));
  const mayResolveInto = (s: string, parent: string | undefined) =>
    s.startsWith('.')
      ? parent !== undefined && dirUrls.some((d) => parent.startsWith(d))
      : s.startsWith('/') || s.startsWith('file:') || namesPackage(s);
  module.registerHooks({
    resolve(specifier, context, nextResolve) {
      if (!check && !mayResolveInto(specifier, context.parentURL)) return nextResolve(specifier, context);
      const resolved = nextResolve(specifier, context);
      const hit = entries.get(resolved.url);
      if (hit) return { url: hit.url, format: hit.format, shortCircuit: true };
      if (inside.has(resolved.url)) secondCopies.add(resolved.url);
      return resolved;
    },
  });
  return records.length;
}

/**
 * Modules of a bundled package this process loaded from the package's folder although its bundle holds them; looked
 * for only with GWLAB_DEP_BUNDLES_CHECK=1.
 */
export function secondCopiesLoaded(): string[] {
  return [...secondCopies].sort();
}
