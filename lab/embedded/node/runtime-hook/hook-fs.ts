// Pod runtime hook, volume part: absolute mountPaths (`/etc/envoy/envoy.yaml`, the service account token under
// `/var/run/secrets/kubernetes.io/serviceaccount/`) are remapped to the pod's volume folders for every path-taking
// function of node:fs and node:fs/promises (sync, callback, promise and stream APIs). ESM named imports see the
// patched functions through module.syncBuiltinESMExports(), called by the hook entry.
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import util from 'node:util';
import type { PodRuntimeMount } from './runtime-config.ts';

/**
 * fs functions and the positions of their path arguments; a function of fs.promises takes its path where its
 * callback twin of the same name does, so the one table serves both (names fs.promises lacks are skipped).
 */
const FS_PATH_ARGS: Record<string, number[]> = {
  access: [0],
  accessSync: [0],
  appendFile: [0],
  appendFileSync: [0],
  chmod: [0],
  chmodSync: [0],
  chown: [0],
  chownSync: [0],
  copyFile: [0, 1],
  copyFileSync: [0, 1],
  cp: [0, 1],
  cpSync: [0, 1],
  createReadStream: [0],
  createWriteStream: [0],
  exists: [0],
  existsSync: [0],
  lchown: [0],
  lchownSync: [0],
  link: [0, 1],
  linkSync: [0, 1],
  lstat: [0],
  lstatSync: [0],
  lutimes: [0],
  lutimesSync: [0],
  mkdir: [0],
  mkdirSync: [0],
  open: [0],
  openSync: [0],
  openAsBlob: [0],
  opendir: [0],
  opendirSync: [0],
  readdir: [0],
  readdirSync: [0],
  readFile: [0],
  readFileSync: [0],
  readlink: [0],
  readlinkSync: [0],
  realpath: [0],
  realpathSync: [0],
  rename: [0, 1],
  renameSync: [0, 1],
  rm: [0],
  rmSync: [0],
  rmdir: [0],
  rmdirSync: [0],
  stat: [0],
  statSync: [0],
  statfs: [0],
  statfsSync: [0],
  symlink: [0, 1],
  symlinkSync: [0, 1],
  truncate: [0],
  truncateSync: [0],
  unlink: [0],
  unlinkSync: [0],
  utimes: [0],
  utimesSync: [0],
  watch: [0],
  watchFile: [0],
  unwatchFile: [0],
  writeFile: [0],
  writeFileSync: [0],
};

/** Maps a path given to fs to the host path, or returns it unchanged. Longest mountPath wins. */
export function pathMapper(mounts: PodRuntimeMount[]): (p: unknown) => unknown {
  const sorted = [...mounts]
    .map((m) => ({ from: m.mountPath.replace(/\/+$/, '') || '/', to: m.hostPath }))
    .sort((a, b) => b.from.length - a.from.length);
  const mapString = (s: string): string | undefined => {
    if (!s.startsWith('/')) return undefined;
    for (const m of sorted) {
      if (s === m.from) return m.to;
      if (s.startsWith(m.from + '/')) return m.to + s.slice(m.from.length);
    }
    return undefined;
  };
  return (p) => {
    if (typeof p === 'string') return mapString(p) ?? p;
    if (p instanceof URL && p.protocol === 'file:') return mapString(fileURLToPath(p)) ?? p;
    if (Buffer.isBuffer(p)) return mapString(p.toString()) ?? p;
    return p;
  };
}

function wrapAll(target: any, table: Record<string, number[]>, map: (p: unknown) => unknown): void {
  for (const [name, positions] of Object.entries(table)) {
    const orig = target[name];
    if (typeof orig !== 'function') continue;
    const wrapped = function (this: unknown, ...args: unknown[]) {
      for (const i of positions) if (i < args.length) args[i] = map(args[i]);
      return orig.apply(this, args);
    };
    // realpath.native, promisify.custom (fs.exists) and friends live on the function objects.
    for (const key of Reflect.ownKeys(orig)) {
      if (key === 'length' || key === 'name' || key === 'prototype') continue;
      const d = Object.getOwnPropertyDescriptor(orig, key);
      if (!d) continue;
      if (typeof d.value === 'function' && (key === 'native' || key === util.promisify.custom)) {
        const inner = d.value;
        d.value = function (this: unknown, ...a: unknown[]) {
          a[0] = map(a[0]);
          return inner.apply(this, a);
        };
      }
      Object.defineProperty(wrapped, key, d);
    }
    target[name] = wrapped;
  }
}

export function installFs(mounts: PodRuntimeMount[]): void {
  if (mounts.length === 0) return;
  const map = pathMapper(mounts);
  wrapAll(fs, FS_PATH_ARGS, map);
  wrapAll(fs.promises, FS_PATH_ARGS, map);
  const origChdir = process.chdir;
  process.chdir = (dir: string) => origChdir(map(dir) as string);
}
