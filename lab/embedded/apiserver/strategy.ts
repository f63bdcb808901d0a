// The rules particular to each kind on create, update and delete, as Kubernetes' registry strategies and admission
// plugins hold them (pkg/registry/<group>/<kind>/strategy.go, NamespaceLifecycle): the status a new object starts
// with, generation, defaulting and validation, Service ClusterIPs and NodePorts, Pod spec immutability, graceful
// deletion of pods and namespaces, and when a deleted object is finally removed. core.ts applies them in order.
import { now } from './clock.ts';
import { applyDefaults, validateCrd, validateCustomResource } from './crd.ts';
import { defaultBuiltin } from './defaults.ts';
import { errors, type FieldError, fieldErrors } from './errors.ts';
import type { DeleteOptions } from './options.ts';
import type { ResourceType } from './resources.ts';
import type { K8sObject, Store } from './store.ts';
import { checkModel, nameRule, validateBuiltin, validateMeta } from './validation.ts';

const clone = <T>(v: T): T => structuredClone(v);

const GENERATION_RESOURCES = new Set([
  'deployments',
  'replicasets',
  'customresourcedefinitions',
  'validatingadmissionpolicies',
  'validatingadmissionpolicybindings',
]);

/** metadata.generation of a new object: 1 for the kinds that track it (and every custom resource), else none. */
export function initialGeneration(rt: ResourceType, m: K8sObject['metadata']): void {
  if (GENERATION_RESOURCES.has(rt.plural) || !rt.builtin) m.generation = 1;
  else delete m.generation;
}

/** Generation bumps when anything but metadata and status changes. */
export function nextGeneration(rt: ResourceType, old: K8sObject, next: K8sObject): void {
  const om = old.metadata;
  if (om.generation !== undefined || GENERATION_RESOURCES.has(rt.plural) || !rt.builtin) {
    const strip = (o: K8sObject) => {
      const { metadata: _m, status: _s, ...rest } = o;
      return JSON.stringify(rt.status ? rest : { ...rest, status: o.status });
    };
    next.metadata.generation = (om.generation ?? 1) + (strip(old) !== strip(next) ? 1 : 0);
  }
}

/**
 * What a delete of a pod or a namespace does instead of removing it at once (registry/core/pod's graceful deletion,
 * the namespace's finalize phase); `next` is the object being marked, `finalizers` its finalizers after the
 * propagation policy. True when the object stays (being deleted gracefully).
 */
export function markGracefulDeletion(
  rt: ResourceType,
  old: K8sObject,
  next: K8sObject,
  opts: DeleteOptions,
  finalizers: string[],
): boolean {
  const m = next.metadata;
  let graceful = false;
  if (rt.builtin && rt.plural === 'pods') {
    const grace = opts.gracePeriodSeconds ?? old.spec?.terminationGracePeriodSeconds ?? 30;
    const terminal = ['Succeeded', 'Failed'].includes(old.status?.phase);
    if (old.spec?.nodeName && !terminal && grace > 0) {
      graceful = true;
      const current = m.deletionGracePeriodSeconds;
      if (current === undefined || grace < current) {
        m.deletionGracePeriodSeconds = grace;
        m.deletionTimestamp = new Date(Date.now() + grace * 1000).toISOString().replace(/\.\d+Z$/, 'Z');
      }
    } else if (m.deletionTimestamp) {
      m.deletionGracePeriodSeconds = 0;
    }
  }
  if (rt.builtin && rt.plural === 'namespaces') {
    graceful = true;
    if (!m.deletionTimestamp) {
      m.deletionTimestamp = now();
      m.deletionGracePeriodSeconds = 0;
    }
    next.status = { ...next.status, phase: 'Terminating' };
    if ((next.spec?.finalizers ?? []).length === 0 && !finalizers.length) graceful = false;
  }
  return graceful;
}

/** What a create starts from: the status a new object of the kind has (pods Pending with their QoS class, ...). */
export function resetStatusOnCreate(rt: ResourceType, obj: K8sObject): void {
  if (!rt.status || rt.plural === 'nodes') return;
  switch (rt.plural) {
    case 'pods':
      obj.status = { phase: 'Pending', qosClass: qosClass(obj) };
      break;
    case 'namespaces':
      obj.status = { phase: 'Active' };
      break;
    case 'services':
      obj.status = { loadBalancer: {} };
      break;
    case 'customresourcedefinitions':
      obj.status = {};
      break;
    default:
      delete obj.status;
  }
}

/** A namespaced create needs its namespace, not terminating (NamespaceLifecycle admission). */
export function admitNamespace(store: Store, ns: string): void {
  const nsObj = store.get('core/namespaces', ns);
  if (!nsObj) throw errors.notFound('', 'namespaces', ns);
  if (nsObj.metadata.deletionTimestamp)
    throw errors.forbidden(`unable to create new content in namespace ${ns} because it is being terminated`, {
      name: ns,
      kind: 'namespaces',
    });
}

/** Admission on create: a Service's ClusterIP (the hook allocates it), IP families and NodePorts. */
export function admitCreate(
  rt: ResourceType,
  obj: K8sObject,
  store: Store,
  allocateClusterIp?: (svc: K8sObject) => string | undefined,
): void {
  if (rt.plural === 'services' && rt.builtin) {
    const s = obj.spec ?? {};
    if (s.type !== 'ExternalName' && !s.clusterIP) {
      const ip = allocateClusterIp?.(obj);
      if (ip) {
        s.clusterIP = ip;
        s.clusterIPs = [ip];
      }
    } else if (s.clusterIP && !s.clusterIPs) s.clusterIPs = [s.clusterIP];
    if (s.type !== 'ExternalName') {
      s.ipFamilies ??= ['IPv4'];
      s.ipFamilyPolicy ??= 'SingleStack';
    }
    if (s.type === 'NodePort' || s.type === 'LoadBalancer') {
      const used = new Set<number>();
      for (const svc of store.list('core/services'))
        for (const p of svc.spec?.ports ?? []) if (p.nodePort) used.add(p.nodePort);
      let next = 30000;
      for (const p of s.ports ?? []) {
        if (p.nodePort) continue;
        while (used.has(next)) next++;
        p.nodePort = next;
        used.add(next);
      }
    }
  }
}

/** Admission on update: a Service keeps its ClusterIP and NodePorts; a Pod's spec is immutable but for images. */
export function admitUpdate(rt: ResourceType, old: K8sObject, next: K8sObject): void {
  if (rt.builtin && rt.plural === 'services') {
    next.spec ??= {};
    const s = next.spec;
    if (!s.clusterIP && old.spec?.clusterIP && s.type !== 'ExternalName') {
      s.clusterIP = old.spec.clusterIP;
      s.clusterIPs = old.spec.clusterIPs;
    }
    if (s.type !== 'ExternalName') {
      s.ipFamilies ??= old.spec?.ipFamilies ?? ['IPv4'];
      s.ipFamilyPolicy ??= old.spec?.ipFamilyPolicy ?? 'SingleStack';
    }
    for (const p of s.ports ?? []) {
      if (p.nodePort) continue;
      const prev = (old.spec?.ports ?? []).find((q: any) => q.port === p.port && q.protocol === p.protocol);
      if (prev?.nodePort && (s.type === 'NodePort' || s.type === 'LoadBalancer')) p.nodePort = prev.nodePort;
    }
  }
  if (rt.builtin && rt.plural === 'pods' && old.spec) {
    // Pod specs are immutable apart from images, activeDeadlineSeconds and tolerations additions.
    const a = clone(old.spec);
    const b = clone(next.spec ?? {});
    for (const c of [...(a.containers ?? []), ...(a.initContainers ?? [])]) delete c.image;
    for (const c of [...(b.containers ?? []), ...(b.initContainers ?? [])]) delete c.image;
    delete a.activeDeadlineSeconds;
    delete b.activeDeadlineSeconds;
    delete a.tolerations;
    delete b.tolerations;
    // The node agent binds pods by setting nodeName once.
    if (!a.nodeName) delete b.nodeName;
    delete a.nodeName;
    delete b.nodeName;
    if (JSON.stringify(a) !== JSON.stringify(b))
      throw errors.invalid('', 'Pod', old.metadata.name!, [
        fieldErrors.forbidden(
          'spec',
          'pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations)',
        ),
      ]);
  }
}

/** An object being deleted whose finalizers are all gone is removed. */
export function finishedDeleting(rt: ResourceType, obj: K8sObject): boolean {
  if (!obj.metadata.deletionTimestamp) return false;
  if ((obj.metadata.finalizers ?? []).length) return false;
  if (rt.builtin && rt.plural === 'namespaces' && (obj.spec?.finalizers ?? []).length) return false;
  if (rt.builtin && rt.plural === 'pods' && obj.spec?.nodeName && (obj.metadata.deletionGracePeriodSeconds ?? 0) > 0)
    return false;
  return true;
}

// ---- patch ----

/** Semantic validation → 422 Invalid with causes (metadata, the kind's rules, a CRD's schema). */
export function validateObject(rt: ResourceType, obj: K8sObject, old?: K8sObject): void {
  const errs: FieldError[] = [];
  errs.push(...validateMeta(obj, rt.builtin ? nameRule(rt.plural) : 'subdomain'));
  if (rt.builtin) {
    errs.push(...checkModel(rt.plural, obj).fieldErrors);
    errs.push(...validateBuiltin(rt.plural, obj, old));
    if (rt.plural === 'customresourcedefinitions') errs.push(...validateCrd(obj));
  } else {
    errs.push(...validateCustomResource(rt.crd?.schema, obj, rt.crd?.rules, old, rt.status));
  }
  if (errs.length) throw errors.invalid(rt.group, rt.kind, obj.metadata.name ?? '', dedupe(errs));
}

/** Defaulting: the built-in kinds' defaults, or the CRD schema's `default`s. */
export function defaultObject(rt: ResourceType, obj: K8sObject): void {
  if (rt.builtin) defaultBuiltin(rt.plural, obj);
  else applyDefaults(rt.crd?.schema, obj);
}

function qosClass(pod: K8sObject): string {
  const cs: any[] = [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])];
  let any = false;
  let guaranteed = cs.length > 0;
  for (const c of cs) {
    const req = c.resources?.requests ?? {};
    const lim = c.resources?.limits ?? {};
    if (Object.keys(req).length || Object.keys(lim).length) any = true;
    for (const r of ['cpu', 'memory']) {
      if (lim[r] === undefined || (req[r] !== undefined && String(req[r]) !== String(lim[r]))) guaranteed = false;
    }
  }
  if (!any) return 'BestEffort';
  return guaranteed ? 'Guaranteed' : 'Burstable';
}

function dedupe(errs: FieldError[]): FieldError[] {
  const seen = new Set<string>();
  return errs.filter((e) => {
    const k = `${e.field}|${e.message}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}
