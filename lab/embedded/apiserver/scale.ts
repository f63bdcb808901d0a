// The `/scale` subresource (autoscaling/v1 Scale) of Deployments, ReplicaSets and custom resources with a scale
// subresource: spec.replicas, status.replicas and status.selector (the text form of the label selector, as
// metav1.LabelSelectorAsSelector(...).String() writes it) read through the kind's paths; updates and patches write
// spec.replicas back through the ordinary update path.
import { formatLabelSelector, labelSelectorRequirements } from '../../../system/shared/selectors.ts';
import { decodeBody } from './decode.ts';
import { errors, fieldErrors } from './errors.ts';
import { evalJsonPath } from './jsonpath.ts';
import { asBadRequest } from './list.ts';
import type { WriteOptions } from './options.ts';
import { applyJsonPatch, jsonMergePatch } from './patch.ts';
import { type ResourceType, storeKey } from './resources.ts';
import type { K8sObject, Store } from './store.ts';

/** What /scale needs of the verbs (core.ts). */
export interface ScaleVerbs {
  readonly store: Store;
  get(rt: ResourceType, namespace: string | undefined, name: string): K8sObject;
  /** The update path once the new object is built (core.ts). */
  updatePrepared(rt: ResourceType, old: K8sObject, next: K8sObject, opts: WriteOptions): K8sObject;
}

const clone = <T>(v: T): T => structuredClone(v);
const isObj = (v: unknown): v is Record<string, any> => v !== null && typeof v === 'object' && !Array.isArray(v);

export function getScale(v: ScaleVerbs, rt: ResourceType, namespace: string | undefined, name: string): K8sObject {
  const obj = v.get(rt, namespace, name);
  return toScale(rt, obj);
}

export function updateScale(
  v: ScaleVerbs,
  rt: ResourceType,
  namespace: string | undefined,
  name: string,
  scale: unknown,
  opts: WriteOptions,
): K8sObject {
  if (!isObj(scale)) throw errors.badRequest('the request body must be a Scale object');
  const replicas = (scale as any).spec?.replicas;
  if (typeof replicas !== 'number' || !Number.isInteger(replicas) || replicas < 0)
    throw errors.invalid('autoscaling', 'Scale', name, [
      fieldErrors.invalid('spec.replicas', replicas, 'must be greater than or equal to 0'),
    ]);
  const old = v.store.get(rt.bucket, storeKey(rt, namespace, name));
  if (!old) throw errors.notFound(rt.group, rt.plural, name);
  const rv = (scale as any).metadata?.resourceVersion;
  if (rv && rv !== old.metadata.resourceVersion) throw errors.conflict(rt.group, rt.plural, name);
  const next = clone(old);
  setPath(next, rt.scale!.specReplicasPath, replicas);
  const updated = v.updatePrepared(rt, old, next, opts);
  return toScale(rt, updated);
}

export function patchScale(
  v: ScaleVerbs,
  rt: ResourceType,
  namespace: string | undefined,
  name: string,
  contentType: string,
  body: Buffer,
  opts: WriteOptions,
): K8sObject {
  const ct = contentType.split(';')[0].trim().toLowerCase();
  const current = getScale(v, rt, namespace, name);
  const patch = decodeBody(body, ct.endsWith('yaml') ? 'application/yaml' : 'application/json');
  let next: unknown;
  if (ct === 'application/json-patch+json') next = applyJsonPatch(current, patch);
  else if (
    ct === 'application/merge-patch+json' ||
    ct === 'application/strategic-merge-patch+json' ||
    ct === 'application/apply-patch+yaml'
  )
    next = jsonMergePatch(current, patch);
  else
    throw errors.unsupportedMediaType(ct, [
      'application/json-patch+json',
      'application/merge-patch+json',
      'application/strategic-merge-patch+json',
      'application/apply-patch+yaml',
    ]);
  return updateScale(v, rt, namespace, name, next, opts);
}

function toScale(rt: ResourceType, obj: K8sObject): K8sObject {
  const s = rt.scale!;
  const spec = evalJsonPath(obj, s.specReplicasPath)[0];
  const status = evalJsonPath(obj, s.statusReplicasPath)[0];
  let selector = s.labelSelectorPath ? evalJsonPath(obj, s.labelSelectorPath)[0] : undefined;
  if (selector === undefined && rt.builtin && obj.spec?.selector) {
    // Kubernetes: metav1.LabelSelectorAsSelector(spec.selector).String(), matchExpressions included.
    selector = formatLabelSelector(asBadRequest(() => labelSelectorRequirements(obj.spec.selector)) ?? []);
  }
  return {
    kind: 'Scale',
    apiVersion: 'autoscaling/v1',
    metadata: {
      name: obj.metadata.name,
      namespace: obj.metadata.namespace,
      uid: obj.metadata.uid,
      resourceVersion: obj.metadata.resourceVersion,
      creationTimestamp: obj.metadata.creationTimestamp,
    },
    spec: { replicas: typeof spec === 'number' ? spec : 0 },
    status: { replicas: typeof status === 'number' ? status : 0, ...(selector ? { selector: String(selector) } : {}) },
  };
}

function setPath(obj: any, path: string, value: unknown): void {
  const parts = path.replace(/^\./, '').split('.');
  let cur = obj;
  for (let i = 0; i < parts.length - 1; i++) {
    cur[parts[i]] ??= {};
    cur = cur[parts[i]];
  }
  cur[parts.at(-1)!] = value;
}
