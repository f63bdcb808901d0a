// The input side of `translate`: manifests from files, directories and stdin, parsed document by document so every
// error names its file and document, then narrowed to exactly what the control plane's informers would hand it.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { parseAllDocuments } from 'yaml';
import { WATCHED } from '../../system/controlplane/kube/watched.ts';
import type { KObject } from '../../system/controlplane/model.ts';
import { matchRequirements, parseLabelSelector } from '../../system/shared/selectors.ts';
import { readManifest } from '../install.ts';

export interface SourceText {
  /** The file as given (or `<stdin>`), for messages. */
  source: string;
  text: string;
}

export interface InputObject {
  object: KObject;
  /** `<file>: document <n>` (and `, item <m>` inside a List), for messages. */
  where: string;
}

const MANIFEST_EXT = /\.(ya?ml|json)$/i;

function walk(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...walk(p));
    else if (e.isFile() && MANIFEST_EXT.test(e.name)) out.push(p);
  }
  return out;
}

/**
 * Reads each `-f` argument: `-` is stdin, a directory is read recursively (*.yaml, *.yml, *.json, in name order),
 * a file is read whatever its name.
 */
export function readSources(paths: string[], readStdin: () => string = () => readFileSync(0, 'utf8')): SourceText[] {
  const out: SourceText[] = [];
  for (const p of paths) {
    if (p === '-') {
      out.push({ source: '<stdin>', text: readStdin() });
      continue;
    }
    let isDir: boolean;
    try {
      isDir = statSync(p).isDirectory();
    } catch {
      throw new Error(`-f ${p}: no such file or directory`);
    }
    const files = isDir ? walk(p) : [p];
    if (isDir && !files.length) throw new Error(`-f ${p}: the directory holds no *.yaml, *.yml or *.json file`);
    for (const f of files) out.push({ source: f, text: readFileSync(f, 'utf8') });
  }
  return out;
}

function checkObject(o: unknown, where: string): KObject {
  if (!o || typeof o !== 'object' || Array.isArray(o)) {
    throw new Error(`${where}: not a Kubernetes object (a mapping with apiVersion, kind and metadata.name)`);
  }
  const k = o as Partial<KObject> & { apiVersion?: unknown };
  const missing = [
    typeof k.apiVersion === 'string' && k.apiVersion ? '' : 'apiVersion',
    typeof k.kind === 'string' && k.kind ? '' : 'kind',
    typeof k.metadata?.name === 'string' && k.metadata.name ? '' : 'metadata.name',
  ].filter(Boolean);
  if (missing.length) {
    const what = typeof k.kind === 'string' ? `${k.kind} ` : '';
    throw new Error(`${where}: ${what}has no ${missing.join(', ')}`);
  }
  return o as KObject;
}

/** Every object of every document (a `kind: List` gives its items); empty documents are skipped. */
export function parseSources(sources: SourceText[]): InputObject[] {
  const out: InputObject[] = [];
  for (const s of sources) {
    parseAllDocuments(s.text).forEach((d, i) => {
      const where = `${s.source}: document ${i + 1}`;
      if (d.errors.length) throw new Error(`${where}: ${d.errors[0].message.split('\n')[0].replace(/:$/, '')}`);
      const v = d.toJS();
      if (v === null || v === undefined) return;
      if (v.kind === 'List' && Array.isArray(v.items)) {
        v.items.forEach((item: unknown, j: number) => {
          const w = `${where}, item ${j + 1}`;
          out.push({ object: checkObject(item, w), where: w });
        });
      } else out.push({ object: checkObject(v, where), where });
    });
  }
  return out;
}

const groupOf = (apiVersion: string) => (apiVersion.includes('/') ? apiVersion.split('/')[0] : '');

const describe = (o: KObject) =>
  `${o.kind} ${o.metadata.namespace ? `${o.metadata.namespace}/` : ''}${o.metadata.name}`;

export interface Selection {
  objects: KObject[];
  /** Why objects were skipped or added, for stderr. */
  notes: string[];
}

/**
 * What the control plane would read of these objects: the kinds (by API group) and label selectors of its informers
 * (system/controlplane/kube/watched.ts), the selector matched as the API server matches a list's labelSelector. The
 * rest is skipped with a note: a Deployment next to a Gateway is normal input.
 * When a later document repeats an object, the later one wins, as with `kubectl apply`.
 */
export function selectReadable(input: InputObject[]): Selection {
  const notes: string[] = [];
  const byKey = new Map<string, InputObject>();
  for (const x of input) {
    const o = x.object;
    const w = WATCHED.find((r) => r.kind === o.kind && groupOf(r.apiVersion) === groupOf(o.apiVersion));
    if (!w) {
      notes.push(`${x.where}: ${describe(o)} skipped: the control plane does not read ${o.apiVersion} ${o.kind}`);
      continue;
    }
    if (w.labelSelector && !matchRequirements(parseLabelSelector(w.labelSelector), o.metadata.labels)) {
      notes.push(
        `${x.where}: ${describe(o)} skipped: the control plane reads only ${o.kind}s labelled ${w.labelSelector}`,
      );
      continue;
    }
    const ns = w.namespaced ? (o.metadata.namespace ?? 'default') : '';
    const key = `${o.kind}/${ns}/${o.metadata.name}`;
    const prev = byKey.get(key);
    if (prev && !isDeepStrictEqual(prev.object, o)) {
      notes.push(`${x.where}: ${describe(o)} replaces the one in ${prev.where}`);
    }
    byKey.set(key, x);
  }
  const objects = [...byKey.values()].map((x) => x.object);
  notes.push(...addInstalledGatewayClass(objects));
  return { objects, notes };
}

/**
 * Manifests written for a cluster rarely carry the GatewayClass: the install creates it. When a Gateway names the
 * installed class and the input lacks it, the install manifest's GatewayClass is added, so offline output matches
 * what the cluster would do.
 */
function addInstalledGatewayClass(objects: KObject[]): string[] {
  const classes = new Set(objects.filter((o) => o.kind === 'GatewayClass').map((o) => o.metadata.name));
  const wanted = new Set(
    objects
      .filter((o) => o.kind === 'Gateway')
      .map((o) => (o as KObject<{ gatewayClassName?: string }>).spec?.gatewayClassName ?? ''),
  );
  const notes: string[] = [];
  const installed = readManifest('install/gwvendor.yaml').filter((d) => d.kind === 'GatewayClass');
  for (const name of [...wanted].filter((n) => !classes.has(n)).sort()) {
    const cls = installed.find((c) => c.metadata?.name === name);
    if (cls) {
      objects.unshift(cls as KObject);
      notes.push(
        `GatewayClass ${name} is not in the input: using the one the install creates (system/manifests/install)`,
      );
    } else {
      notes.push(`GatewayClass ${name || '(none)'} is not in the input: Gateways of that class are not translated`);
    }
  }
  return notes;
}
