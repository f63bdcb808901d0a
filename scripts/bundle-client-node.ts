// `node scripts/bundle-client-node.ts` (npm's postinstall runs it): bundles @kubernetes/client-node into the one module
// that system/shared/kube/client-node-bundle.ts resolves the library to (why: that file's header). rolldown (installed
// with vite, a dev dependency) joins the package's own ~870 modules into one, comments and white space dropped,
// names kept; the library's dependencies stay imports, resolved from node_modules as the package itself resolves them
// (refused when npm nested one of them under the package: the bundle could then load another version). Written to
// a temporary file and renamed; an existing bundle of the installed version is kept (--force rebuilds); a bundle that
// does not load is removed. Exits 0 without a bundle when rolldown is not installed (an install without dev
// dependencies) or anything fails: an install must not fail for want of a faster start; the library then loads from
// its package, as before.
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import {
  CLIENT_NODE,
  clientNodeBundle,
  SERIALIZER_EXPORTS,
  useClientNodeBundle,
} from '../system/shared/kube/client-node-bundle.ts';
import { writeFileWhole } from '../system/shared/write-whole.ts';

const say = (msg: string) => process.stdout.write(`bundle-client-node: ${msg}\n`);

export async function bundleClientNode(opts: { force?: boolean } = {}): Promise<string | undefined> {
  const b = clientNodeBundle();
  if (!b) {
    say(`${CLIENT_NODE} is not installed; nothing to bundle`);
    return undefined;
  }
  if (!opts.force && existsSync(b.main) && existsSync(b.serializer)) return b.main;
  let rolldown: typeof import('rolldown');
  try {
    rolldown = await import('rolldown');
  } catch {
    say('rolldown is not installed (no dev dependencies?); the library loads from its package');
    return undefined;
  }
  const pkg = JSON.parse(readFileSync(join(b.packageDir, 'package.json'), 'utf8'));
  // Its runtime dependencies (@types/* are type declarations only).
  const deps = Object.keys(pkg.dependencies ?? {}).filter((d) => !d.startsWith('@types/'));
  const nested = deps.filter((d) => existsSync(join(b.packageDir, 'node_modules', d)));
  if (nested.length) {
    say(`not bundled: npm installed ${nested.join(', ')} under ${b.packageDir}; the bundle would load another copy`);
    return undefined;
  }
  const dir = dirname(b.main);
  mkdirSync(dir, { recursive: true });
  const entry = join(dir, `entry.${process.pid}.mjs`);
  const out = `${b.main}.${process.pid}.tmp.mjs`;
  writeFileSync(
    entry,
    `export * from ${JSON.stringify(join(b.packageDir, 'dist', 'index.js'))};\n` +
      `export { ${Object.entries(SERIALIZER_EXPORTS)
        .map(([name, as]) => `${name} as ${as}`)
        .join(', ')} } from ${JSON.stringify(join(b.packageDir, 'dist', 'serializer.js'))};\n`,
  );
  const started = performance.now();
  try {
    await rolldown.build({
      input: entry,
      platform: 'node',
      external: (id) => id.startsWith('node:') || deps.some((d) => id === d || id.startsWith(`${d}/`)),
      output: { file: out, format: 'esm', minify: { compress: false, mangle: false } },
      logLevel: 'warn',
    });
    renameSync(out, b.main);
  } finally {
    rmSync(entry, { force: true });
    rmSync(out, { force: true });
  }
  writeFileWhole(
    b.serializer,
    `export { ${Object.entries(SERIALIZER_EXPORTS)
      .map(([name, as]) => `${as} as ${name}`)
      .join(', ')} } from ${JSON.stringify(`./${b.main.slice(dir.length + 1)}`)};\n`,
  );
  say(`${CLIENT_NODE} ${b.version} → ${b.main} (${Math.round(performance.now() - started)} ms)`);
  return b.main;
}

if (import.meta.main) {
  try {
    await bundleClientNode({ force: process.argv.includes('--force') });
  } catch (err) {
    say(`not bundled: ${err instanceof Error ? err.message : String(err)}`);
  }
  // What a process that uses it then loads: the bundle, whole; one that does not load is removed.
  try {
    if (useClientNodeBundle() && typeof (await import(CLIENT_NODE)).KubeConfig !== 'function')
      throw new Error('it has no KubeConfig');
  } catch (err) {
    const b = clientNodeBundle();
    if (b) for (const f of [b.main, b.serializer]) rmSync(f, { force: true });
    say(`the bundle does not load (${err instanceof Error ? err.message : String(err)}); removed`);
  }
}
