// Offline translation: resources (as YAML or objects) → per-Gateway IR, xDS resources and statuses, through the same
// pipeline the running control plane uses. The golden tests, the test helpers (testing.ts) and the lab's `translate`
// tool call this.
import { parseAllDocuments } from 'yaml';
import type { GatewayIR, ValidationMode } from './ir/types.ts';
import { Runtime } from './krt/collection.ts';
import { watchedKind } from './kube/watched.ts';
import type { KObject } from './model.ts';
import { Pipeline } from './pipeline.ts';
import type { Json } from './xds/translator/envoy.ts';

export interface TranslateResult {
  /** gateway key → IR */
  ir: Record<string, GatewayIR>;
  /** proxy role → the resources its snapshot holds */
  xds: Record<string, { listeners: Json[]; routes: Json[]; clusters: Json[]; endpoints: Json[] }>;
  /** `<resource>/<ns>/<name>` → the status the control plane writes */
  status: Record<string, Record<string, unknown>>;
  pipeline: Pipeline;
}

export function parseYamlObjects(text: string, source = 'input'): KObject[] {
  const out: KObject[] = [];
  parseAllDocuments(text).forEach((d, i) => {
    if (d.errors.length) throw new Error(`${source}: document ${i + 1}: ${d.errors[0].message}`);
    const o = d.toJS();
    if (o === null || o === undefined) return;
    if (o.kind === 'List' && Array.isArray(o.items)) out.push(...o.items);
    else out.push(o);
  });
  return out;
}

/**
 * Puts objects into the pipeline's inputs as informers would hand them over: a namespaced kind without a namespace is
 * in `default`, as with kubectl apply. Throws for an object the control plane does not read (kube/watched.ts).
 */
export function loadObjects(p: Pipeline, objects: KObject[]): void {
  objects.forEach((o, i) => {
    if (!o || typeof o !== 'object' || !o.kind || !o.metadata?.name) {
      throw new Error(`object ${i + 1}: needs kind and metadata.name`);
    }
    const w = watchedKind(o.kind);
    if (!w) {
      throw new Error(
        `object ${i + 1} (${o.kind} ${o.metadata.name}): kind ${o.kind} is not read by the control plane`,
      );
    }
    p.inputFor(o.kind)!.upsert(w.namespaced ? { ...o, metadata: { namespace: 'default', ...o.metadata } } : o);
  });
}

/** Loads objects into a fresh pipeline (all inputs synced), runs it once and collects its outputs. */
export function translateObjects(objects: KObject[], opts: { mode?: ValidationMode } = {}): TranslateResult {
  const rt = new Runtime({ autoFlush: false, start: false });
  const p = new Pipeline({ mode: opts.mode ?? 'strict', runtime: rt });
  loadObjects(p, objects);
  p.markInputsSynced();
  rt.start();
  rt.flush();

  const ir: TranslateResult['ir'] = {};
  for (const g of [...p.gateways.list()].sort((a, b) => (a.key < b.key ? -1 : 1))) if (g.ir) ir[g.key] = g.ir;
  const xds: TranslateResult['xds'] = {};
  for (const s of [...p.snapshots.list()].sort((a, b) => (a.role < b.role ? -1 : 1))) {
    xds[s.role] = { listeners: s.listeners, routes: s.routes, clusters: s.clusters, endpoints: s.endpoints };
  }
  const status: TranslateResult['status'] = {};
  const all = p.statusCollections().flatMap((c) => c.list());
  for (const s of all.sort((a, b) => (a.key < b.key ? -1 : 1))) status[s.key] = s.status;
  return { ir, xds, status, pipeline: p };
}

export function translateYaml(text: string, opts: { mode?: ValidationMode } = {}): TranslateResult {
  return translateObjects(parseYamlObjects(text), opts);
}
