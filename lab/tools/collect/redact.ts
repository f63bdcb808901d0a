// Secret values never leave the cluster in a collection. Secret objects are written with their values replaced, and —
// because a value can also sit in a ConfigMap, an annotation, a log line or a proxy's config_dump — every written
// file is scrubbed afterwards of every Secret value (decoded, base64 as the API holds it, and as escaped inside JSON
// or YAML strings) and of the credentials of the kubeconfig in use.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import type { KObj } from '../../toolkit/kube.ts';

export const REDACTED = '<redacted>';
/** Shorter values are not searched for: replacing every "true" or "80" would destroy the files and protect nothing. */
export const MIN_VALUE_LENGTH = 4;
/** A line of a multi-line value is searched for on its own (YAML block scalars re-indent lines) from this length. */
export const MIN_LINE_LENGTH = 8;

/** A Secret as written: metadata and type, every data/stringData value replaced, no last-applied copy of the data. */
export function redactSecret(s: KObj): KObj {
  const out: KObj = structuredClone(s);
  for (const field of ['data', 'stringData'] as const) {
    if (out[field] && typeof out[field] === 'object') {
      out[field] = Object.fromEntries(Object.keys(out[field]).map((k) => [k, REDACTED]));
    }
  }
  const ann = out.metadata?.annotations;
  if (ann?.['kubectl.kubernetes.io/last-applied-configuration'] !== undefined) {
    ann['kubectl.kubernetes.io/last-applied-configuration'] = REDACTED;
  }
  return out;
}

/** The forms in which a value may appear in a written file. */
function formsOf(value: string): string[] {
  const forms = [value, JSON.stringify(value).slice(1, -1)];
  if (value.includes('\n')) {
    for (const line of value.split('\n')) {
      const t = line.trim();
      if (t.length >= MIN_LINE_LENGTH) forms.push(t);
    }
  }
  return forms;
}

/** Every string to scrub for these Secrets (and extra credentials), longest first so no part of one is left over. */
export function needlesFor(secrets: KObj[], extra: string[] = []): string[] {
  const values: string[] = [...extra];
  for (const s of secrets) {
    for (const [field, encoded] of [
      ['data', true],
      ['stringData', false],
    ] as const) {
      for (const v of Object.values((s[field] ?? {}) as Record<string, unknown>)) {
        if (typeof v !== 'string') continue;
        if (!encoded) {
          values.push(v, Buffer.from(v).toString('base64'));
          continue;
        }
        values.push(v);
        const bytes = Buffer.from(v, 'base64');
        const text = bytes.toString('utf8');
        // A binary value has no text form to search for; its base64 form is covered above.
        if (Buffer.from(text, 'utf8').equals(bytes)) values.push(text);
      }
    }
  }
  const needles = new Set<string>();
  for (const v of values) {
    if (v.length < MIN_VALUE_LENGTH) continue;
    for (const f of formsOf(v)) if (f.length >= MIN_VALUE_LENGTH) needles.add(f);
  }
  return [...needles].sort((a, b) => b.length - a.length);
}

/** The credentials of the kubeconfig's current user, which must not end up in a bundle either. */
export function kubeconfigCredentials(kc: KubeConfig): string[] {
  const u = kc.getCurrentUser();
  if (!u) return [];
  const out = [u.token, u.password, u.keyData].filter((v): v is string => !!v);
  if (u.keyData) out.push(Buffer.from(u.keyData, 'base64').toString('utf8'));
  for (const [k, v] of Object.entries(u.authProvider?.config ?? {})) {
    if (/token|secret/i.test(k) && typeof v === 'string') out.push(v);
  }
  return out;
}

export function scrub(text: string, needles: string[]): { text: string; replaced: number } {
  let replaced = 0;
  let out = text;
  for (const n of needles) {
    if (!out.includes(n)) continue;
    const parts = out.split(n);
    replaced += parts.length - 1;
    out = parts.join(REDACTED);
  }
  return { text: out, replaced };
}

/** Scrubs the files in place; returns how many occurrences were replaced. */
export async function scrubFiles(root: string, files: string[], needles: string[]): Promise<number> {
  if (!needles.length) return 0;
  let total = 0;
  for (const f of files) {
    const path = join(root, f);
    const r = scrub(await readFile(path, 'utf8'), needles);
    if (r.replaced) {
      total += r.replaced;
      await writeFile(path, r.text);
    }
  }
  return total;
}
