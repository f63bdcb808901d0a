// @kubernetes/client-node as one prebuilt module (issue 14). The library is ~870 ES modules (its generated API
// classes and models); resolving, reading and linking them costs every process that imports it ~0.3 s of CPU, and
// every command-line tool, lab:up and the control plane import it at start. `npm ci` bundles it once
// (scripts/bundle-client-node.ts: rolldown, the library's own dependencies left as imports) into
// node_modules/.cache/gwlab/, and a process that calls useClientNodeBundle() before it first imports the library
// gets that file for `@kubernetes/client-node` (and for `.../dist/serializer.js`, whose ObjectSerializer the bundle
// exports too): the same code and the same exports, loaded as two modules instead of ~870 (~0.1 s of CPU).
// Without the file (the image, installed without dev dependencies; a checkout installed before this existed) or with
// GWLAB_CLIENT_NODE_BUNDLE=0, nothing changes: the library loads from its package.
import { existsSync, readFileSync } from 'node:fs';
import module from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** Bumped when what the bundle holds changes: its file name changes with it, so an older one is not used. */
export const BUNDLE_FORMAT = 1;
export const CLIENT_NODE = '@kubernetes/client-node';
export const CLIENT_NODE_SERIALIZER = '@kubernetes/client-node/dist/serializer.js';
/** The names under which the bundle exports dist/serializer.js's two exports (the package index does not). */
export const SERIALIZER_EXPORTS = {
  ObjectSerializer: 'gwlabSerializerObjectSerializer',
  defaultSerializer: 'gwlabDefaultSerializer',
};

export interface ClientNodeBundle {
  /** The installed library's version (part of the files' names: a new version is bundled anew). */
  version: string;
  /** Its package folder. */
  packageDir: string;
  /** The bundle: the package index and dist/serializer.js's exports. */
  main: string;
  /** A module re-exporting the bundle's serializer exports under their own names. */
  serializer: string;
}

/** Where the installed library's bundle lives (it may not exist); undefined when the library is not installed. */
export function clientNodeBundle(): ClientNodeBundle | undefined {
  let index: string;
  try {
    index = fileURLToPath(import.meta.resolve(CLIENT_NODE));
  } catch {
    return undefined;
  }
  const packageDir = dirname(dirname(index)); // <package>/dist/index.js
  const version = String(JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')).version);
  const dir = join(dirname(dirname(packageDir)), '.cache', 'gwlab'); // node_modules/@kubernetes/client-node
  const base = `client-node-${version}-f${BUNDLE_FORMAT}`;
  return { version, packageDir, main: join(dir, `${base}.mjs`), serializer: join(dir, `${base}-serializer.mjs`) };
}

let registered = false;

/**
 * Resolves `@kubernetes/client-node` (and its dist/serializer.js) to the bundle from now on, when the bundle exists;
 * true when it does. Call it before anything imports the library: a module already loaded from the package stays.
 */
export function useClientNodeBundle(): boolean {
  if (registered) return true;
  if (process.env.GWLAB_CLIENT_NODE_BUNDLE === '0') return false;
  const b = clientNodeBundle();
  if (!b || !existsSync(b.main) || !existsSync(b.serializer)) return false;
  const urls = new Map([
    [CLIENT_NODE, pathToFileURL(b.main).href],
    [CLIENT_NODE_SERIALIZER, pathToFileURL(b.serializer).href],
  ]);
  module.registerHooks({
    resolve(specifier, context, nextResolve) {
      const url = urls.get(specifier);
      return url ? { url, format: 'module', shortCircuit: true } : nextResolve(specifier, context);
    },
  });
  registered = true;
  return true;
}
