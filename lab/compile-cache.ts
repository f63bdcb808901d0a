// The compile cache the lab's processes share: lab:up, the lab process and the embedded node's pods all load their
// modules through Node's on-disk compile cache (https://nodejs.org/api/module.html#module-compile-cache: V8's code
// cache and the type-stripped TypeScript of each file, keyed by path and content, and by Node and V8 version), in one
// folder for the machine, so that every lab after the first starts warm. Starting a gwlab process is mostly loading
// modules (~550 for the lab process, ~1,600 for the control plane) and a warm cache makes that ~40 % cheaper, with no
// TypeScript parser loaded at all (issue 14). A child gets the folder as NODE_COMPILE_CACHE, which turns the cache
// on before its first module loads; NODE_DISABLE_COMPILE_CACHE=1 (inherited) turns it off.
import module from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The folder: NODE_COMPILE_CACHE when set, else this process's cache folder, else Node's default. */
export function compileCacheDir(): string {
  return process.env.NODE_COMPILE_CACHE || module.getCompileCacheDir() || join(tmpdir(), 'node-compile-cache');
}
