// Atomic projection of a volume's files, as the kubelet writes configMap, secret, downwardAPI and projected volumes
// (Kubernetes pkg/volume/util/atomic_writer.go, AtomicWriter.Write). The real files live in a hidden timestamped
// folder `..<UTC yyyy_mm_dd_hh_mm_ss>.<random>`; `..data` is a symlink to it; every user-visible top-level name is a
// symlink `<name> -> ..data/<name>`. An update writes a new timestamped folder, points `..data_tmp` at it and renames
// that over `..data` (rename(2) is atomic), then removes names that left the payload. A reader thus sees either the
// whole old version or the whole new one, never a missing or half-written file: this is what lets the kubelet swap a
// pod's service-account token under a running program (token-manager.ts).
//
// One deviation: the kubelet removes the old folder right after the swap, so a reader that resolved `..data` to it
// just before can still fail to open a file in it (ENOENT; atomic-writer.test.ts saw it under load). Here the old
// folder is removed by the next write instead: one version back stays readable until then.
import {
  chmodSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, posix } from 'node:path';

export const DATA_DIR = '..data';
const NEW_DATA_DIR = '..data_tmp';
const MAX_NAME = 255;
const MAX_PATH = 4096;
/** A timestamped folder's name: `..2006_01_02_15_04_05.<random>`. */
const TS_DIR = /^\.\.\d{4}_\d\d_\d\d_\d\d_\d\d_\d\d\./;

export interface FileProjection {
  data: string | Buffer;
  /** Permission bits (the volume's defaultMode or the item's mode). */
  mode: number;
}

export class PayloadError extends Error {}

/** The payload's paths, cleaned, or a PayloadError naming the path (atomic_writer.go validatePath). */
export function validatePayload(payload: Record<string, FileProjection>): Map<string, FileProjection> {
  const clean = new Map<string, FileProjection>();
  for (const [p, content] of Object.entries(payload)) {
    if (p === '') throw new PayloadError('invalid path: must not be empty');
    if (p.startsWith('/')) throw new PayloadError(`invalid path: must be relative path: ${p}`);
    if (p.length > MAX_PATH)
      throw new PayloadError(`invalid path: must be less than or equal to ${MAX_PATH} characters`);
    const items = p.split('/');
    for (const item of items) {
      if (item === '..') throw new PayloadError(`invalid path: must not contain '..': ${p}`);
      if (item.length > MAX_NAME) {
        throw new PayloadError(`invalid path: filenames must be less than or equal to ${MAX_NAME} characters`);
      }
    }
    if (items[0].startsWith('..') && items[0].length > 2) {
      throw new PayloadError(`invalid path: must not start with '..': ${p}`);
    }
    clean.set(posix.normalize(p), content);
  }
  return clean;
}

function readlinkOrUndefined(path: string): string | undefined {
  try {
    return readlinkSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** Every path (files and folders) under `dir`, relative to it. */
function walk(dir: string, prefix = ''): string[] {
  const out: string[] = [];
  for (const e of readdirSync(join(dir, prefix), { withFileTypes: true })) {
    const rel = prefix ? `${prefix}/${e.name}` : e.name;
    out.push(rel);
    if (e.isDirectory()) out.push(...walk(dir, rel));
  }
  return out;
}

/** Paths of the old version that the new payload no longer has (its files and their parent folders stay). */
function pathsToRemove(payload: Map<string, FileProjection>, oldTsPath: string): string[] {
  let old: string[];
  try {
    old = walk(oldTsPath);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const keep = new Set<string>();
  for (const p of payload.keys()) {
    for (let sub = p; sub && sub !== '.'; sub = posix.dirname(sub)) keep.add(sub);
  }
  return old.filter((p) => !keep.has(p));
}

function sameContent(path: string, data: string | Buffer): boolean {
  try {
    lstatSync(path);
  } catch {
    return false;
  }
  return readFileSync(path).equals(Buffer.isBuffer(data) ? data : Buffer.from(data));
}

const pad = (n: number) => String(n).padStart(2, '0');
/** `..2006_01_02_15_04_05.`: Go's layout of the timestamped folder's prefix, in UTC. */
function timestampPrefix(d: Date): string {
  return `..${d.getUTCFullYear()}_${pad(d.getUTCMonth() + 1)}_${pad(d.getUTCDate())}_${pad(d.getUTCHours())}_${pad(
    d.getUTCMinutes(),
  )}_${pad(d.getUTCSeconds())}.`;
}

/**
 * Projects `payload` (relative path → content and mode) into `targetDir` atomically. Returns false when the current
 * version already has exactly this content (nothing written), true when a new version was swapped in.
 */
export function writeAtomically(targetDir: string, payload: Record<string, FileProjection>, now = new Date()): boolean {
  const clean = validatePayload(payload);
  mkdirSync(targetDir, { recursive: true });
  const dataDirPath = join(targetDir, DATA_DIR);
  const oldTsDir = readlinkOrUndefined(dataDirPath);
  const oldTsPath = oldTsDir ? join(targetDir, oldTsDir) : undefined;
  let remove: string[] = [];
  if (oldTsPath) {
    remove = pathsToRemove(clean, oldTsPath);
    const changed = [...clean].some(([p, f]) => !sameContent(join(oldTsPath, p), f.data));
    if (!changed && remove.length === 0) return false;
  }
  // The new version, complete, before anything points at it.
  const tsDir = mkdtempSync(join(targetDir, timestampPrefix(now)));
  chmodSync(tsDir, 0o755);
  for (const [p, f] of clean) {
    const full = join(tsDir, p);
    mkdirSync(dirname(full), { recursive: true });
    writeFileSync(full, f.data);
    chmodSync(full, f.mode & 0o7777);
  }
  // User-visible names: one symlink per top-level name into ..data (they resolve once ..data is swapped).
  for (const p of clean.keys()) {
    const top = p.split('/')[0];
    const visible = join(targetDir, top);
    let exists = true;
    try {
      lstatSync(visible);
    } catch {
      exists = false;
    }
    if (!exists) symlinkSync(posix.join(DATA_DIR, top), visible);
  }
  const newDataDirPath = join(targetDir, NEW_DATA_DIR);
  rmSync(newDataDirPath, { force: true });
  try {
    symlinkSync(posix.basename(tsDir), newDataDirPath);
    renameSync(newDataDirPath, dataDirPath);
  } catch (err) {
    rmSync(newDataDirPath, { force: true });
    rmSync(tsDir, { recursive: true, force: true });
    throw err;
  }
  // Names that left the payload: only top-level symlinks are user-visible (the rest lives in the old folder).
  for (const p of remove) {
    if (!p.includes('/')) unlinkSync(join(targetDir, p));
  }
  // Versions older than the one just replaced (and any a failed write left).
  const keep = new Set([posix.basename(tsDir), oldTsDir]);
  for (const e of readdirSync(targetDir)) {
    if (TS_DIR.test(e) && !keep.has(e)) rmSync(join(targetDir, e), { recursive: true, force: true });
  }
  return true;
}
