// The image catalog: what runs for an image on the embedded node, which has no container engine.
// - Images built from this repository map to their local entry points (builtins, see system-images.ts).
// - Users add their own in `${GWLAB_HOME}/images.yaml`:
//       images:
//         "registry.example/echo:1.2":          # exact repo:tag (a reference without tag means :latest)
//           command: ["node", "/home/me/echo/server.js"]   # the image's ENTRYPOINT
//           args: ["--port", "8080"]                      # its CMD (optional)
//           workingDir: /home/me/echo                      # optional
//           env: { LOG_LEVEL: info }                       # optional
//         "registry.example/tool:1.0": ["/usr/local/bin/tool"]   # shorthand: command only
//   Node programs get the pod's network identity through the pod runtime hook; other programs run without network
//   isolation (they share the host's loopback addresses), see README.md.
// - Any other image is an ImagePullError (reason ErrImagePull), which the kubelet turns into ImagePullBackOff.
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { expandAll } from './expand.ts';

export interface ImageEntry {
  /** ENTRYPOINT. */
  command: string[];
  /** CMD: default args when the container gives no `args`. */
  args?: string[];
  /** Default working directory (a host path). */
  workingDir?: string;
  /** Image environment, under the container's own env. */
  env?: Record<string, string>;
  /** Where the entry came from, for messages. */
  source?: string;
}

export class ImagePullError extends Error {
  readonly reason = 'ErrImagePull';
  readonly image: string;
  constructor(image: string, message: string) {
    super(message);
    this.name = 'ImagePullError';
    this.image = image;
  }
}

export class ImageCatalogError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ImageCatalogError';
  }
}

/** `name` → `name:latest`; digests and explicit tags stay as written. */
export function normalizeImageRef(ref: string): string {
  const r = ref.trim();
  if (r.includes('@')) return r;
  const lastSlash = r.lastIndexOf('/');
  return r.slice(lastSlash + 1).includes(':') ? r : `${r}:latest`;
}

function strList(v: unknown, where: string): string[] {
  if (!Array.isArray(v) || v.some((s) => typeof s !== 'string')) {
    throw new ImageCatalogError(`${where}: must be a list of strings, e.g. ["node", "/path/to/server.js"]`);
  }
  return v as string[];
}

/** Parses the images.yaml text; errors name the file, the image and the field. */
export function parseImagesYaml(text: string, file: string): Map<string, ImageEntry> {
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err) {
    throw new ImageCatalogError(`${file}: not valid YAML: ${(err as Error).message}`);
  }
  const out = new Map<string, ImageEntry>();
  if (doc === null || doc === undefined) return out;
  const images = (doc as { images?: unknown }).images;
  if (typeof doc !== 'object' || Array.isArray(doc) || images === undefined) {
    throw new ImageCatalogError(`${file}: expected a top-level "images:" map of "repo:tag" to a command`);
  }
  if (images === null) return out;
  if (typeof images !== 'object' || Array.isArray(images)) {
    throw new ImageCatalogError(`${file}: "images" must be a map of "repo:tag" to a command`);
  }
  for (const [ref, v] of Object.entries(images as Record<string, unknown>)) {
    const where = `${file}: images["${ref}"]`;
    let entry: ImageEntry;
    if (Array.isArray(v)) {
      entry = { command: strList(v, where) };
    } else if (v && typeof v === 'object') {
      const o = v as Record<string, unknown>;
      for (const k of Object.keys(o)) {
        if (!['command', 'args', 'workingDir', 'env'].includes(k)) {
          throw new ImageCatalogError(`${where}.${k}: unknown field (use command, args, workingDir, env)`);
        }
      }
      entry = { command: strList(o.command, `${where}.command`) };
      if (o.args !== undefined) entry.args = strList(o.args, `${where}.args`);
      if (o.workingDir !== undefined) {
        if (typeof o.workingDir !== 'string') throw new ImageCatalogError(`${where}.workingDir: must be a string`);
        entry.workingDir = o.workingDir;
      }
      if (o.env !== undefined) {
        if (!o.env || typeof o.env !== 'object' || Array.isArray(o.env)) {
          throw new ImageCatalogError(`${where}.env: must be a map of name to value`);
        }
        entry.env = Object.fromEntries(Object.entries(o.env).map(([k, val]) => [k, String(val)]));
      }
    } else {
      throw new ImageCatalogError(`${where}: must be a command list or a map with "command"`);
    }
    if (entry.command.length === 0) throw new ImageCatalogError(`${where}.command: must not be empty`);
    entry.source = file;
    out.set(normalizeImageRef(ref), entry);
  }
  return out;
}

export interface ImageCatalogOptions {
  /** GWLAB_HOME: the catalog file is `<home>/images.yaml`. */
  home: string;
  /** Images of this repository (system-images.ts). */
  builtins?: Record<string, ImageEntry>;
}

export class ImageCatalog {
  readonly file: string;
  private readonly builtins: Map<string, ImageEntry>;
  private cache?: { mtimeMs: number; size: number; entries: Map<string, ImageEntry> };

  constructor(opts: ImageCatalogOptions) {
    this.file = join(opts.home, 'images.yaml');
    this.builtins = new Map(
      Object.entries(opts.builtins ?? {}).map(([k, v]) => [normalizeImageRef(k), { source: 'builtin', ...v }]),
    );
  }

  /** The user's entries, re-read when the file changes. Throws ImageCatalogError for a broken file. */
  userEntries(): Map<string, ImageEntry> {
    let st: { mtimeMs: number; size: number };
    try {
      st = statSync(this.file);
    } catch {
      return new Map();
    }
    if (!this.cache || this.cache.mtimeMs !== st.mtimeMs || this.cache.size !== st.size) {
      const entries = parseImagesYaml(readFileSync(this.file, 'utf8'), this.file);
      this.cache = { mtimeMs: st.mtimeMs, size: st.size, entries };
    }
    return this.cache.entries;
  }

  /** All known images (builtins first, user entries may override them). */
  list(): Map<string, ImageEntry> {
    return new Map([...this.builtins, ...this.userEntries()]);
  }

  /** The entry for an image, or an ImagePullError naming the fix. */
  resolve(image: string): ImageEntry {
    const ref = normalizeImageRef(image);
    let user: Map<string, ImageEntry>;
    try {
      user = this.userEntries();
    } catch (err) {
      throw new ImagePullError(image, `Failed to pull image "${image}": ${(err as Error).message}`);
    }
    const entry = user.get(ref) ?? this.builtins.get(ref);
    if (entry) return entry;
    throw new ImagePullError(
      image,
      `Failed to pull image "${image}": not in the embedded cluster's image catalog; ` +
        `add it to ${this.file} (images: {"${ref}": ["node", "/path/to/program.js"]})`,
    );
  }
}

/**
 * The argv of a container as a container runtime computes it: `command` replaces the image's ENTRYPOINT (and drops
 * its CMD), `args` replaces CMD; `$(VAR)` references are expanded with the container's environment.
 */
export function containerArgv(
  entry: ImageEntry,
  container: { command?: string[]; args?: string[] },
  env: Record<string, string>,
): string[] {
  const command = container.command?.length ? expandAll(container.command, env)! : entry.command;
  const args = container.args?.length
    ? expandAll(container.args, env)!
    : container.command?.length
      ? []
      : (entry.args ?? []);
  return [...command, ...args];
}
