// The verbs (get, list, create, update, patch, delete, deletecollection) and their subresources, independent of HTTP:
// decoding and field validation, defaulting, admission, validation, managedFields, storage. The HTTP layer (server.ts)
// and watch.ts sit on top.
import { randomBytes, randomUUID } from 'node:crypto';
import YAML from 'yaml';
import {
  type FieldRequirement,
  formatLabelSelector,
  type LabelRequirement,
  labelSelectorRequirements,
  matchFields,
  matchRequirements,
  parseFieldSelector,
  parseLabelSelector,
  SelectorError,
} from '../../../system/shared/selectors.ts';
import type { UserInfo } from './authn.ts';
import { now } from './clock.ts';
import { applyDefaults, pruneUnknown, validateCrd, validateCustomResource } from './crd.ts';
import { defaultBuiltin } from './defaults.ts';
import { ApiError, errors, type FieldError, fieldErrors } from './errors.ts';
import { evalJsonPath } from './jsonpath.ts';
import { serverSideApply, updateManagedFields } from './managedfields.ts';
import { applyJsonPatch, jsonMergePatch, strategicMergePatch } from './patch.ts';
import { decodeProtobuf, isProtobuf } from './protobuf.ts';
import { crdResources, gv, type ResourceRegistry, type ResourceType } from './resources.ts';
import { builtinSchema, dropUnknown, unknownFields } from './schema.ts';
import { type K8sObject, objectKey, type Store } from './store.ts';
import { checkModel, nameRule, validateBuiltin, validateMeta } from './validation.ts';

export type FieldValidation = 'Strict' | 'Warn' | 'Ignore';

export interface WriteOptions {
  dryRun: boolean;
  fieldManager?: string;
  fieldValidation: FieldValidation;
  /** Warnings to return in `Warning` headers (unknown fields with fieldValidation=Warn). */
  warnings: string[];
  /** Derived from the User-Agent when fieldManager is not given. */
  defaultManager: string;
  /** The requester (admission hooks check it); undefined for the server's own writes (bootstrap). */
  user?: UserInfo;
}

export interface ListOptions {
  labelSelector?: string | null;
  fieldSelector?: string | null;
  limit?: number;
  continue?: string | null;
}

export interface DeleteOptions {
  propagationPolicy?: 'Orphan' | 'Background' | 'Foreground';
  gracePeriodSeconds?: number;
  preconditions?: { uid?: string; resourceVersion?: string };
  dryRun: boolean;
}

/** Hooks other parts of the server attach to writes. */
export interface CoreHooks {
  /** ClusterIP allocation for Services (returns an unused address). */
  allocateClusterIp?: (svc: K8sObject) => string | undefined;
  /**
   * Every create and update, after defaulting and validation and before anything is stored (dry runs too): throws to
   * refuse the write. `requestName` is the name in the request's URL (none for a POST). RBAC escalation prevention.
   */
  admitWrite?: (w: {
    rt: ResourceType;
    obj: K8sObject;
    old?: K8sObject;
    opts: WriteOptions;
    requestName?: string;
  }) => void;
}

const GENERATION_RESOURCES = new Set(['deployments', 'replicasets', 'customresourcedefinitions']);
const NAME_CHARS = 'bcdfghjklmnpqrstvwxz2456789';

export { now };

const clone = <T>(v: T): T => structuredClone(v);
const isObj = (v: unknown): v is Record<string, any> => v !== null && typeof v === 'object' && !Array.isArray(v);

export class Core {
  readonly store: Store;
  readonly registry: ResourceRegistry;
  private readonly hooks: CoreHooks;

  constructor(store: Store, registry: ResourceRegistry, hooks: CoreHooks = {}) {
    this.store = store;
    this.registry = registry;
    this.hooks = hooks;
    // Serve the CRDs already stored.
    for (const crd of store.list('apiextensions.k8s.io/customresourcedefinitions')) this.syncCrd(crd);
  }

  key(rt: ResourceType, namespace: string | undefined, name: string): string {
    return objectKey(rt.namespaced ? namespace : undefined, name);
  }

  /** The stored object in the version `rt` serves (CRD versions differ only in apiVersion: conversion None). */
  present(rt: ResourceType, obj: K8sObject): K8sObject {
    const apiVersion = gv(rt);
    if (obj.apiVersion === apiVersion && obj.kind === rt.kind) return obj;
    return { ...obj, apiVersion, kind: rt.kind };
  }

  get(rt: ResourceType, namespace: string | undefined, name: string): K8sObject {
    const obj = this.store.get(rt.bucket, this.key(rt, namespace, name));
    if (!obj) throw errors.notFound(rt.group, rt.plural, name);
    return this.present(rt, obj);
  }

  /** Field selector values of an object (metadata.name/namespace, the resource's own fields, CRD selectable fields). */
  fieldsOf(rt: ResourceType, obj: K8sObject): Record<string, string> {
    const f: Record<string, string> = {
      'metadata.name': obj.metadata.name ?? '',
      'metadata.namespace': obj.metadata.namespace ?? '',
    };
    if (rt.fields) Object.assign(f, rt.fields(obj));
    for (const p of rt.crd?.selectableFields ?? []) {
      const v = evalJsonPath(obj, `.${p}`)[0];
      f[p] = v === undefined || v === null ? '' : String(v);
    }
    return f;
  }

  allowedFields(rt: ResourceType): Set<string> {
    return new Set(Object.keys(this.fieldsOf(rt, { metadata: {}, spec: {}, status: {} })));
  }

  /** The request's `labelSelector` and `fieldSelector`; a malformed one is 400 BadRequest. */
  selectors(rt: ResourceType, opts: ListOptions): { labels: LabelRequirement[]; fields: FieldRequirement[] } {
    return asBadRequest(() => ({
      labels: parseLabelSelector(opts.labelSelector),
      fields: parseFieldSelector(opts.fieldSelector, this.allowedFields(rt), `"${rt.kind}"`),
    }));
  }

  matches(rt: ResourceType, obj: K8sObject, sel: { labels: LabelRequirement[]; fields: FieldRequirement[] }): boolean {
    if (sel.labels.length && !matchRequirements(sel.labels, obj.metadata.labels)) return false;
    if (sel.fields.length && !matchFields(sel.fields, this.fieldsOf(rt, obj))) return false;
    return true;
  }

  list(
    rt: ResourceType,
    namespace: string | undefined,
    opts: ListOptions,
  ): { items: K8sObject[]; rv: number; continue?: string; remaining?: number } {
    const sel = this.selectors(rt, opts);
    let rv = this.store.revision();
    let start: string | undefined;
    let all: K8sObject[] | undefined;
    if (opts.continue) {
      // Kubernetes' token: base64 of {v, rv, start}. Later pages show the list as it was at the first page's
      // revision (rv); -1 (from an expired token's answer) continues at the latest one.
      let c: { v?: unknown; rv?: unknown; start?: unknown };
      try {
        c = JSON.parse(Buffer.from(opts.continue, 'base64url').toString());
      } catch {
        throw errors.badRequest('continue key is not valid: illegal base64 data at input byte 0');
      }
      if (c?.v !== 'meta.k8s.io/v1')
        throw errors.badRequest('continue key is not valid: server does not recognize this encoded version');
      if (typeof c.start !== 'string' || !c.start)
        throw errors.badRequest('continue key is not valid: encoded start key empty');
      if (typeof c.rv !== 'number' || !Number.isInteger(c.rv) || (c.rv < 1 && c.rv !== -1))
        throw errors.badRequest(
          'continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)',
        );
      start = c.start;
      if (c.rv !== -1 && c.rv < rv) {
        const then = this.store.listAt(rt.bucket, rt.namespaced ? namespace : undefined, c.rv);
        if (then === 'expired') throw errors.continueExpired(continueToken(-1, start));
        all = then;
        rv = c.rv;
      }
    }
    all ??= this.store.list(rt.bucket, rt.namespaced ? namespace : undefined);
    const items: K8sObject[] = [];
    const limit = opts.limit && opts.limit > 0 ? opts.limit : Number.POSITIVE_INFINITY;
    let i = 0;
    if (start !== undefined) {
      // Resume after the last key of the previous page.
      while (i < all.length && this.key(rt, all[i].metadata.namespace, all[i].metadata.name!) <= start) i++;
    }
    let more = false;
    for (; i < all.length; i++) {
      const o = all[i];
      if (!this.matches(rt, o, sel)) continue;
      if (items.length >= limit) {
        more = true;
        break;
      }
      items.push(this.present(rt, o));
    }
    let cont: string | undefined;
    if (more && items.length) {
      const last = items[items.length - 1];
      cont = continueToken(rv, this.key(rt, last.metadata.namespace, last.metadata.name!));
    }
    return { items, rv, continue: cont };
  }

  // ---- decoding and validation ----

  /** Parses a request body (JSON or YAML) into an object. */
  decode(body: Buffer, contentType: string): unknown {
    if (isProtobuf(contentType)) return decodeProtobuf(body);
    const text = body.toString('utf8');
    if (!text.trim()) throw errors.badRequest('the request body is empty: an object is required');
    const ct = contentType.split(';')[0].trim().toLowerCase();
    try {
      if (ct.endsWith('yaml')) return YAML.parse(text, { maxAliasCount: 100 });
      return JSON.parse(text);
    } catch (e) {
      throw errors.badRequest(
        `the body of the request could not be decoded as ${ct.endsWith('yaml') ? 'YAML' : 'JSON'}: ${e instanceof Error ? e.message.split('\n')[0] : e}`,
      );
    }
  }

  private checkTypeMeta(rt: ResourceType, obj: unknown): K8sObject {
    if (!isObj(obj)) throw errors.badRequest(`the request body must be a ${rt.kind} object`);
    const o = obj as K8sObject;
    if (o.kind !== undefined && o.kind !== rt.kind && !(rt.scale && o.kind === 'Scale'))
      throw errors.badRequest(`the kind of the object (${o.kind}) does not match the kind on the URL (${rt.kind})`);
    if (o.apiVersion !== undefined && o.apiVersion !== gv(rt) && !(rt.scale && o.kind === 'Scale'))
      throw errors.badRequest(
        `the API version in the data (${o.apiVersion}) does not match the expected API version (${gv(rt)})`,
      );
    if (o.metadata !== undefined && !isObj(o.metadata))
      throw errors.badRequest(
        `${rt.kind} in version "${rt.version}" cannot be handled as a ${rt.kind}: metadata must be an object`,
      );
    o.metadata ??= {};
    o.apiVersion = gv(rt);
    o.kind = rt.kind;
    return o;
  }

  /**
   * Unknown and mistyped fields. Strict → 400 naming the fields; Warn → warnings; Ignore → dropped silently.
   * Unknown fields are always dropped from what is stored, as Kubernetes' decoder and CRD pruning do.
   */
  private fieldValidation(rt: ResourceType, obj: K8sObject, opts: WriteOptions): void {
    let unknown: string[];
    if (rt.builtin) {
      unknown = unknownFields(rt.schema, obj);
      if (unknown.length) dropUnknown(rt.schema, obj);
    } else {
      const meta = builtinSchema('V1ObjectMeta');
      unknown = unknownFields(meta, obj.metadata, 'metadata');
      if (unknown.length) dropUnknown(meta, obj.metadata);
      unknown.push(...pruneUnknown(rt.crd?.schema, obj));
    }
    if (unknown.length) {
      const msgs = unknown.map((f) => `unknown field "${f}"`);
      if (opts.fieldValidation === 'Strict') {
        throw errors.badRequest(
          `${rt.kind} in version "${rt.version}" cannot be handled as a ${rt.kind}: strict decoding error: ${msgs.join(', ')}`,
          unknown.map((f) => ({ reason: 'FieldValueInvalid', message: `unknown field "${f}"`, field: f })),
        );
      }
      if (opts.fieldValidation === 'Warn') opts.warnings.push(...msgs);
    }
    if (rt.builtin) {
      const mc = checkModel(rt.plural, obj);
      if (mc.typeErrors.length) {
        const t = mc.typeErrors[0];
        throw errors.badRequest(
          `${rt.kind} in version "${rt.version}" cannot be handled as a ${rt.kind}: json: cannot unmarshal ${jsonTypeName(t.actual)} into Go struct field ${t.field} of type ${t.expected}`,
          mc.typeErrors.map((e) => ({
            reason: 'FieldValueTypeInvalid',
            field: e.field,
            message: `expected ${e.expected}, got ${jsonTypeName(e.actual)}`,
          })),
        );
      }
    }
  }

  /** Semantic validation → 422 Invalid with causes. */
  private validate(rt: ResourceType, obj: K8sObject, old?: K8sObject): void {
    const errs: FieldError[] = [];
    errs.push(...validateMeta(obj, rt.builtin ? nameRule(rt.plural) : 'subdomain'));
    if (rt.builtin) {
      errs.push(...checkModel(rt.plural, obj).fieldErrors);
      errs.push(...validateBuiltin(rt.plural, obj, old));
      if (rt.plural === 'customresourcedefinitions') errs.push(...validateCrd(obj));
    } else {
      errs.push(...validateCustomResource(rt.crd?.schema, obj));
    }
    if (errs.length) throw errors.invalid(rt.group, rt.kind, obj.metadata.name ?? '', dedupe(errs));
  }

  private defaults(rt: ResourceType, obj: K8sObject): void {
    if (rt.builtin) defaultBuiltin(rt.plural, obj);
    else applyDefaults(rt.crd?.schema, obj);
  }

  private manager(opts: WriteOptions): string {
    return opts.fieldManager || opts.defaultManager;
  }

  private checkManager(opts: WriteOptions, apply: boolean): void {
    if (apply && !opts.fieldManager)
      throw errors.badRequest(
        'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch',
      );
    if (opts.fieldManager && opts.fieldManager.length > 128)
      throw errors.badRequest('fieldManager: Too long: may not be more than 128 bytes');
  }

  // ---- create ----

  /** Creates from `body`, which the call takes ownership of (it is modified and stored). */
  create(rt: ResourceType, namespace: string | undefined, body: unknown, opts: WriteOptions): K8sObject {
    this.checkManager(opts, false);
    const obj = this.checkTypeMeta(rt, body);
    this.fieldValidation(rt, obj, opts);
    return this.createPrepared(rt, namespace, obj, opts, (o) =>
      updateManagedFields({
        old: undefined,
        next: o,
        manager: this.manager(opts),
        schema: rt.schema,
        apiVersion: gv(rt),
        hasStatusSubresource: rt.status,
      }),
    );
  }

  private createPrepared(
    rt: ResourceType,
    namespace: string | undefined,
    obj: K8sObject,
    opts: WriteOptions,
    managed: (o: K8sObject) => unknown[],
    requestName?: string,
  ): K8sObject {
    const m = obj.metadata;
    if (rt.namespaced) {
      if (m.namespace && namespace && m.namespace !== namespace)
        throw errors.badRequest(
          'the namespace of the provided object does not match the namespace sent on the request',
        );
      m.namespace = namespace ?? m.namespace;
      if (!m.namespace) throw errors.badRequest('a namespace is required for namespaced resources');
      this.admitNamespace(m.namespace);
    } else delete m.namespace;
    if (!m.name && m.generateName) {
      for (let tries = 0; tries < 8; tries++) {
        const suffix = Array.from(randomBytes(5), (b) => NAME_CHARS[b % NAME_CHARS.length]).join('');
        const candidate = `${m.generateName}${suffix}`;
        if (!this.store.get(rt.bucket, this.key(rt, m.namespace, candidate))) {
          m.name = candidate;
          break;
        }
      }
    }
    if (m.name && this.store.get(rt.bucket, this.key(rt, m.namespace, m.name))) {
      throw errors.alreadyExists(rt.group, rt.plural, m.name);
    }
    m.uid = randomUUID();
    m.creationTimestamp = now();
    delete m.resourceVersion;
    delete m.deletionTimestamp;
    delete m.deletionGracePeriodSeconds;
    delete m.selfLink;
    if (GENERATION_RESOURCES.has(rt.plural) || !rt.builtin) m.generation = 1;
    else delete m.generation;
    this.resetStatusOnCreate(rt, obj);
    this.defaults(rt, obj);
    this.admitCreate(rt, obj);
    this.validate(rt, obj);
    this.hooks.admitWrite?.({ rt, obj, opts, requestName });
    m.managedFields = managed(obj);
    if (!m.managedFields || !(m.managedFields as unknown[]).length) delete m.managedFields;
    if (opts.dryRun) return this.present(rt, obj);
    this.store.put(rt.bucket, this.key(rt, m.namespace, m.name!), obj);
    this.afterWrite(rt, obj);
    return this.present(rt, obj);
  }

  private resetStatusOnCreate(rt: ResourceType, obj: K8sObject): void {
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

  private admitNamespace(ns: string): void {
    const nsObj = this.store.get('core/namespaces', ns);
    if (!nsObj) throw errors.notFound('', 'namespaces', ns);
    if (nsObj.metadata.deletionTimestamp)
      throw errors.forbidden(`unable to create new content in namespace ${ns} because it is being terminated`, {
        name: ns,
        kind: 'namespaces',
      });
  }

  /** Admission on create: ClusterIP allocation, CRD conditions. */
  private admitCreate(rt: ResourceType, obj: K8sObject): void {
    if (rt.plural === 'services' && rt.builtin) {
      const s = obj.spec ?? {};
      if (s.type !== 'ExternalName' && !s.clusterIP) {
        const ip = this.hooks.allocateClusterIp?.(obj);
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
        for (const svc of this.store.list('core/services'))
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

  /** Side effects of a stored write: CRDs become served (Established) or stop being served. */
  private afterWrite(rt: ResourceType, obj: K8sObject): void {
    if (rt.builtin && rt.plural === 'customresourcedefinitions') this.syncCrd(obj);
  }

  /** Registers the CRD's versions and marks it NamesAccepted + Established. */
  syncCrd(crd: K8sObject): void {
    const name = crd.metadata.name!;
    if (crd.metadata.deletionTimestamp) {
      this.registry.setCrd(name, []);
      return;
    }
    this.registry.setCrd(name, crdResources(crd));
    const conds: any[] = crd.status?.conditions ?? [];
    const est = conds.find((c) => c.type === 'Established');
    const names = crd.status?.acceptedNames;
    if (est?.status === 'True' && JSON.stringify(names) === JSON.stringify(crd.spec.names)) return;
    const t = now();
    const next = clone(crd);
    next.status = {
      ...next.status,
      acceptedNames: clone(crd.spec.names),
      storedVersions: [
        ...new Set([
          ...(crd.status?.storedVersions ?? []),
          ...crd.spec.versions.filter((v: any) => v.storage).map((v: any) => v.name),
        ]),
      ],
      conditions: [
        {
          type: 'NamesAccepted',
          status: 'True',
          reason: 'NoConflicts',
          message: 'no conflicts found',
          lastTransitionTime: t,
        },
        {
          type: 'Established',
          status: 'True',
          reason: 'InitialNamesAccepted',
          message: 'the initial names have been accepted',
          lastTransitionTime: t,
        },
      ],
    };
    this.store.put('apiextensions.k8s.io/customresourcedefinitions', name, next);
  }

  // ---- update ----

  update(
    rt: ResourceType,
    namespace: string | undefined,
    name: string,
    body: unknown,
    opts: WriteOptions,
    subresource?: 'status' | 'finalize',
  ): K8sObject {
    this.checkManager(opts, false);
    const obj = this.checkTypeMeta(rt, body);
    if (obj.metadata.name && obj.metadata.name !== name)
      throw errors.badRequest(
        `the name of the object (${obj.metadata.name}) does not match the name on the URL (${name})`,
      );
    obj.metadata.name = name;
    if (rt.namespaced && obj.metadata.namespace && obj.metadata.namespace !== namespace)
      throw errors.badRequest('the namespace of the provided object does not match the namespace sent on the request');
    this.fieldValidation(rt, obj, opts);
    const old = this.store.get(rt.bucket, this.key(rt, namespace, name));
    if (!old) throw errors.notFound(rt.group, rt.plural, name);
    if (obj.metadata.resourceVersion && obj.metadata.resourceVersion !== old.metadata.resourceVersion)
      throw errors.conflict(rt.group, rt.plural, name);
    return this.updatePrepared(rt, old, obj, opts, subresource);
  }

  private updatePrepared(
    rt: ResourceType,
    old: K8sObject,
    incoming: K8sObject,
    opts: WriteOptions,
    subresource?: 'status' | 'finalize',
    applied?: K8sObject,
  ): K8sObject {
    let next: K8sObject;
    if (subresource === 'status') {
      next = clone(old);
      next.status = clone(incoming.status);
      if (next.status === undefined) delete next.status;
      // Status writers may touch labels/annotations? Kubernetes keeps metadata from the old object.
    } else if (subresource === 'finalize') {
      next = clone(old);
      next.spec = { ...next.spec, finalizers: incoming.spec?.finalizers ?? [] };
    } else {
      next = incoming;
      if (rt.status) {
        if (old.status === undefined) delete next.status;
        else next.status = clone(old.status);
      }
    }
    const m = next.metadata;
    const om = old.metadata;
    m.name = om.name;
    m.namespace = om.namespace;
    m.uid = om.uid;
    m.creationTimestamp = om.creationTimestamp;
    if (om.deletionTimestamp) {
      m.deletionTimestamp = om.deletionTimestamp;
      if (om.deletionGracePeriodSeconds !== undefined) m.deletionGracePeriodSeconds = om.deletionGracePeriodSeconds;
    } else {
      delete m.deletionTimestamp;
      delete m.deletionGracePeriodSeconds;
    }
    if (subresource === 'status' || subresource === 'finalize') {
      for (const k of Object.keys(m)) if (!['managedFields'].includes(k)) m[k] = om[k];
      for (const k of Object.keys(om)) if (m[k] === undefined) m[k] = om[k];
    }
    if (om.deletionTimestamp && (m.finalizers ?? []).some((f: string) => !(om.finalizers ?? []).includes(f)))
      throw errors.invalid(rt.group, rt.kind, om.name!, [
        fieldErrors.forbidden('metadata.finalizers', 'no new finalizers can be added if the object is being deleted'),
      ]);
    this.defaults(rt, next);
    if (subresource === undefined) this.admitUpdate(rt, old, next);
    // Generation: bumps when anything but metadata and status changes.
    if (om.generation !== undefined || GENERATION_RESOURCES.has(rt.plural) || !rt.builtin) {
      const strip = (o: K8sObject) => {
        const { metadata: _m, status: _s, ...rest } = o;
        return JSON.stringify(rt.status ? rest : { ...rest, status: o.status });
      };
      m.generation = (om.generation ?? 1) + (strip(old) !== strip(next) ? 1 : 0);
    }
    this.validate(rt, next, old);
    this.hooks.admitWrite?.({ rt, obj: next, old, opts, requestName: om.name });
    const sub = subresource === 'status' ? 'status' : undefined;
    m.managedFields = applied
      ? applied.metadata.managedFields
      : updateManagedFields({
          old,
          next,
          manager: this.manager(opts),
          schema: rt.schema,
          apiVersion: gv(rt),
          subresource: sub,
          hasStatusSubresource: rt.status,
        });
    if (!(m.managedFields as unknown[])?.length) delete m.managedFields;
    m.resourceVersion = om.resourceVersion;
    // A write that changes nothing is not stored (no new resourceVersion, no watch event).
    if (sameIgnoringManagedTime(old, next)) return this.present(rt, old);
    if (opts.dryRun) return this.present(rt, next);
    const key = this.key(rt, om.namespace, om.name!);
    if (this.finishedDeleting(rt, next)) {
      this.store.remove(rt.bucket, key, next);
      this.afterDelete(rt, next);
      return this.present(rt, next);
    }
    this.store.put(rt.bucket, key, next);
    this.afterWrite(rt, next);
    return this.present(rt, next);
  }

  private admitUpdate(rt: ResourceType, old: K8sObject, next: K8sObject): void {
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
  private finishedDeleting(rt: ResourceType, obj: K8sObject): boolean {
    if (!obj.metadata.deletionTimestamp) return false;
    if ((obj.metadata.finalizers ?? []).length) return false;
    if (rt.builtin && rt.plural === 'namespaces' && (obj.spec?.finalizers ?? []).length) return false;
    if (rt.builtin && rt.plural === 'pods' && obj.spec?.nodeName && (obj.metadata.deletionGracePeriodSeconds ?? 0) > 0)
      return false;
    return true;
  }

  // ---- patch ----

  patch(
    rt: ResourceType,
    namespace: string | undefined,
    name: string,
    contentType: string,
    body: Buffer,
    opts: WriteOptions & { force?: boolean },
    subresource?: 'status',
  ): { obj: K8sObject; created: boolean } {
    const ct = contentType.split(';')[0].trim().toLowerCase();
    const accepted = [
      'application/json-patch+json',
      'application/merge-patch+json',
      ...(rt.builtin ? ['application/strategic-merge-patch+json'] : []),
      'application/apply-patch+yaml',
    ];
    if (!accepted.includes(ct)) throw errors.unsupportedMediaType(ct, accepted);
    const isApply = ct === 'application/apply-patch+yaml';
    this.checkManager(opts, isApply);
    if (!isApply && opts.force) throw errors.badRequest('force: Forbidden: may not be specified for non-apply patch');
    const patch = this.decode(body, isApply ? 'application/yaml' : 'application/json');
    const key = this.key(rt, namespace, name);
    const old = this.store.get(rt.bucket, key);

    if (isApply) {
      const applied = this.checkTypeMeta(rt, patch);
      if (applied.metadata.name !== undefined && applied.metadata.name !== name)
        throw errors.badRequest(
          `the name of the object (${applied.metadata.name}) does not match the name on the URL (${name})`,
        );
      applied.metadata.name = name;
      if (rt.namespaced && applied.metadata.namespace && applied.metadata.namespace !== namespace)
        throw errors.badRequest(
          'the namespace of the provided object does not match the namespace sent on the request',
        );
      this.fieldValidation(rt, applied, opts);
      if (!old && subresource) throw errors.notFound(rt.group, rt.plural, name);
      if (old && applied.metadata.resourceVersion && applied.metadata.resourceVersion !== old.metadata.resourceVersion)
        throw errors.conflict(rt.group, rt.plural, name);
      const merged = serverSideApply({
        live: old,
        applied,
        manager: opts.fieldManager!,
        force: !!opts.force,
        schema: rt.schema,
        apiVersion: gv(rt),
        subresource,
        hasStatusSubresource: rt.status,
        group: rt.group,
        resource: rt.plural,
      });
      if (!old) {
        if (rt.namespaced) merged.metadata.namespace = namespace;
        const mf = merged.metadata.managedFields;
        const obj = this.createPrepared(rt, namespace, merged, opts, () => mf, name);
        return { obj, created: true };
      }
      return { obj: this.updatePrepared(rt, old, merged, opts, subresource, merged), created: false };
    }

    if (!old) throw errors.notFound(rt.group, rt.plural, name);
    const current = this.present(rt, old);
    let next: unknown;
    if (ct === 'application/json-patch+json') next = applyJsonPatch(current, patch);
    else if (ct === 'application/merge-patch+json') {
      if (!isObj(patch)) throw errors.badRequest('merge patch must be a JSON object');
      next = jsonMergePatch(current, patch);
    } else {
      if (!isObj(patch)) throw errors.badRequest('strategic merge patch must be a JSON object');
      next = strategicMergePatch(current, patch, rt.schema);
    }
    const obj = this.checkTypeMeta(rt, next);
    if (obj.metadata.name !== name)
      throw errors.badRequest('metadata.name: the name of a patched object cannot change');
    this.fieldValidation(rt, obj, opts);
    if (obj.metadata.resourceVersion && obj.metadata.resourceVersion !== old.metadata.resourceVersion)
      throw errors.conflict(rt.group, rt.plural, name);
    return { obj: this.updatePrepared(rt, old, obj, opts, subresource), created: false };
  }

  // ---- delete ----

  delete(
    rt: ResourceType,
    namespace: string | undefined,
    name: string,
    opts: DeleteOptions,
  ): { obj: K8sObject; deleted: boolean } {
    const key = this.key(rt, namespace, name);
    const old = this.store.get(rt.bucket, key);
    if (!old) throw errors.notFound(rt.group, rt.plural, name);
    const pre = opts.preconditions;
    if (pre?.uid && pre.uid !== old.metadata.uid)
      throw errors.conflict(
        rt.group,
        rt.plural,
        name,
        `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${old.metadata.uid}`,
      );
    if (pre?.resourceVersion && pre.resourceVersion !== old.metadata.resourceVersion)
      throw errors.conflict(
        rt.group,
        rt.plural,
        name,
        `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${old.metadata.resourceVersion}`,
      );

    const next = clone(old);
    const m = next.metadata;
    const finalizers: string[] = [...(m.finalizers ?? [])];
    const policy = opts.propagationPolicy;
    if (!m.deletionTimestamp) {
      if (policy === 'Orphan' && !finalizers.includes('orphan')) finalizers.push('orphan');
      if (policy === 'Foreground' && !finalizers.includes('foregroundDeletion')) finalizers.push('foregroundDeletion');
    } else if (policy === 'Foreground' && finalizers.includes('orphan')) {
      // Switching an ongoing orphan deletion to foreground.
      finalizers.splice(finalizers.indexOf('orphan'), 1, 'foregroundDeletion');
    }
    m.finalizers = finalizers.length ? finalizers : undefined;
    if (m.finalizers === undefined) delete m.finalizers;

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
    if (finalizers.length && !m.deletionTimestamp) {
      m.deletionTimestamp = now();
      m.deletionGracePeriodSeconds = 0;
    }
    if (finalizers.length || graceful) {
      if (opts.dryRun) return { obj: this.present(rt, next), deleted: false };
      if (JSON.stringify(next) !== JSON.stringify(old)) this.store.put(rt.bucket, key, next);
      return { obj: this.present(rt, next), deleted: false };
    }
    if (opts.dryRun) return { obj: this.present(rt, old), deleted: true };
    const ev = this.store.remove(rt.bucket, key);
    const finalObj = ev?.obj ?? old;
    this.afterDelete(rt, finalObj);
    return { obj: this.present(rt, finalObj), deleted: true };
  }

  private afterDelete(rt: ResourceType, obj: K8sObject): void {
    if (rt.builtin && rt.plural === 'customresourcedefinitions') {
      this.registry.setCrd(obj.metadata.name!, []);
      // Custom resources of a deleted CRD go with it.
      const bucket = `${obj.spec.group}/${obj.spec.names.plural}`;
      for (const o of this.store.list(bucket))
        this.store.remove(bucket, objectKey(o.metadata.namespace, o.metadata.name!));
    }
  }

  deleteCollection(rt: ResourceType, namespace: string | undefined, lo: ListOptions, opts: DeleteOptions): K8sObject[] {
    const { items } = this.list(rt, namespace, { labelSelector: lo.labelSelector, fieldSelector: lo.fieldSelector });
    const out: K8sObject[] = [];
    for (const o of items) {
      try {
        out.push(this.delete(rt, o.metadata.namespace, o.metadata.name!, opts).obj);
      } catch (e) {
        if (!(e instanceof ApiError && e.code === 404)) throw e;
      }
    }
    return out;
  }

  // ---- scale ----

  getScale(rt: ResourceType, namespace: string | undefined, name: string): K8sObject {
    const obj = this.get(rt, namespace, name);
    return toScale(rt, obj);
  }

  updateScale(
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
    const old = this.store.get(rt.bucket, this.key(rt, namespace, name));
    if (!old) throw errors.notFound(rt.group, rt.plural, name);
    const rv = (scale as any).metadata?.resourceVersion;
    if (rv && rv !== old.metadata.resourceVersion) throw errors.conflict(rt.group, rt.plural, name);
    const next = clone(old);
    setPath(next, rt.scale!.specReplicasPath, replicas);
    const updated = this.updatePrepared(rt, old, next, opts);
    return toScale(rt, updated);
  }

  patchScale(
    rt: ResourceType,
    namespace: string | undefined,
    name: string,
    contentType: string,
    body: Buffer,
    opts: WriteOptions,
  ): K8sObject {
    const ct = contentType.split(';')[0].trim().toLowerCase();
    const current = this.getScale(rt, namespace, name);
    const patch = this.decode(body, ct.endsWith('yaml') ? 'application/yaml' : 'application/json');
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
    return this.updateScale(rt, namespace, name, next, opts);
  }
}

/** Runs `fn`, answering a SelectorError as 400 BadRequest with its message and causes. */
function asBadRequest<T>(fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    if (e instanceof SelectorError) throw errors.badRequest(e.message, e.causes);
    throw e;
  }
}

/** A list continuation token: the revision the list shows and the last key served. */
function continueToken(rv: number, start: string): string {
  return Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv, start })).toString('base64url');
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

function jsonTypeName(t: string): string {
  return t === 'object' ? 'object' : t === 'array' ? 'array' : t;
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

function sameIgnoringManagedTime(a: K8sObject, b: K8sObject): boolean {
  const norm = (o: K8sObject) =>
    JSON.stringify({
      ...o,
      metadata: {
        ...o.metadata,
        resourceVersion: undefined,
        managedFields: (o.metadata.managedFields ?? []).map((e: any) => ({ ...e, time: undefined })),
      },
    });
  return norm(a) === norm(b);
}
