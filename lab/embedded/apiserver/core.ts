// The verbs (get, list, create, update, patch, delete, deletecollection), independent of HTTP, in the order of
// k8s.io/apiserver's generic registry store: decode and check fields (decode.ts), default, admit and validate by the
// kind's rules (strategy.ts), managedFields (managedfields.ts), then storage. Lists and their selectors are list.ts,
// /scale is scale.ts (through updatePrepared), a CRD's serving is crd-lifecycle.ts. The HTTP layer (server.ts,
// handlers/) sits on top.
import { randomBytes, randomUUID } from 'node:crypto';
import type { FieldRequirement, LabelRequirement } from '../../../system/shared/selectors.ts';
import { now } from './clock.ts';
import { serveCrd, unserveCrd } from './crd-lifecycle.ts';
import { checkTypeMeta, decodeBody, fieldValidation } from './decode.ts';
import { ApiError, errors, fieldErrors } from './errors.ts';
import { listObjects, matchesSelectors, selectorsOf } from './list.ts';
import { serverSideApply, updateManagedFields } from './managedfields.ts';
import type { CoreHooks, DeleteOptions, ListOptions, WriteOptions } from './options.ts';
import { applyJsonPatch, jsonMergePatch, strategicMergePatch } from './patch.ts';
import { gv, present, type ResourceRegistry, type ResourceType, storeKey } from './resources.ts';
import type { K8sObject, Store } from './store.ts';
import {
  admitCreate,
  admitNamespace,
  admitUpdate,
  defaultObject,
  finishedDeleting,
  initialGeneration,
  markGracefulDeletion,
  nextGeneration,
  resetStatusOnCreate,
  validateObject,
} from './strategy.ts';

export type { CoreHooks, DeleteOptions, FieldValidation, ListOptions, WriteOptions } from './options.ts';

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
    return storeKey(rt, namespace, name);
  }

  /** The stored object in the version `rt` serves (CRD versions differ only in apiVersion: conversion None). */
  present(rt: ResourceType, obj: K8sObject): K8sObject {
    return present(rt, obj);
  }

  get(rt: ResourceType, namespace: string | undefined, name: string): K8sObject {
    const obj = this.store.get(rt.bucket, this.key(rt, namespace, name));
    if (!obj) throw errors.notFound(rt.group, rt.plural, name);
    return this.present(rt, obj);
  }

  /** The request's `labelSelector` and `fieldSelector`; a malformed one is 400 BadRequest. */
  selectors(rt: ResourceType, opts: ListOptions): { labels: LabelRequirement[]; fields: FieldRequirement[] } {
    return selectorsOf(rt, opts);
  }

  matches(rt: ResourceType, obj: K8sObject, sel: { labels: LabelRequirement[]; fields: FieldRequirement[] }): boolean {
    return matchesSelectors(rt, obj, sel);
  }

  list(
    rt: ResourceType,
    namespace: string | undefined,
    opts: ListOptions,
  ): { items: K8sObject[]; rv: number; continue?: string; remaining?: number } {
    return listObjects(this.store, rt, namespace, opts);
  }

  /** Parses a request body (JSON, YAML or Kubernetes protobuf) into an object. */
  decode(body: Buffer, contentType: string): unknown {
    return decodeBody(body, contentType);
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
    const obj = checkTypeMeta(rt, body);
    fieldValidation(rt, obj, opts);
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
      admitNamespace(this.store, m.namespace);
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
    initialGeneration(rt, m);
    resetStatusOnCreate(rt, obj);
    defaultObject(rt, obj);
    admitCreate(rt, obj, this.store, this.hooks.allocateClusterIp);
    validateObject(rt, obj);
    this.hooks.admitWrite?.({ rt, obj, opts, requestName });
    this.hooks.validatingAdmission?.(
      {
        operation: 'CREATE',
        rt,
        name: m.name ?? '',
        namespace: m.namespace,
        object: obj,
        user: opts.user,
        dryRun: opts.dryRun,
      },
      opts.warnings,
    );
    m.managedFields = managed(obj);
    if (!m.managedFields || !(m.managedFields as unknown[]).length) delete m.managedFields;
    if (opts.dryRun) return this.present(rt, obj);
    this.store.put(rt.bucket, this.key(rt, m.namespace, m.name!), obj);
    this.afterWrite(rt, obj);
    return this.present(rt, obj);
  }

  /** Side effects of a stored write: CRDs become served (Established) or stop being served; the hooks' own. */
  private afterWrite(rt: ResourceType, obj: K8sObject): void {
    if (rt.builtin && rt.plural === 'customresourcedefinitions') this.syncCrd(obj);
    this.hooks.afterWrite?.(rt, obj);
  }

  /** Registers the CRD's versions and marks it NamesAccepted + Established. */
  syncCrd(crd: K8sObject): void {
    serveCrd(this.store, this.registry, crd);
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
    const obj = checkTypeMeta(rt, body);
    if (obj.metadata.name && obj.metadata.name !== name)
      throw errors.badRequest(
        `the name of the object (${obj.metadata.name}) does not match the name on the URL (${name})`,
      );
    obj.metadata.name = name;
    if (rt.namespaced && obj.metadata.namespace && obj.metadata.namespace !== namespace)
      throw errors.badRequest('the namespace of the provided object does not match the namespace sent on the request');
    fieldValidation(rt, obj, opts);
    const old = this.store.get(rt.bucket, this.key(rt, namespace, name));
    if (!old) throw errors.notFound(rt.group, rt.plural, name);
    if (obj.metadata.resourceVersion && obj.metadata.resourceVersion !== old.metadata.resourceVersion)
      throw errors.conflict(rt.group, rt.plural, name);
    return this.updatePrepared(rt, old, obj, opts, subresource);
  }

  /** The update path once the new object is built (update, patch, apply, /status, /finalize, /scale). */
  updatePrepared(
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
    defaultObject(rt, next);
    if (subresource === undefined) admitUpdate(rt, old, next);
    nextGeneration(rt, old, next);
    validateObject(rt, next, old);
    this.hooks.admitWrite?.({ rt, obj: next, old, opts, requestName: om.name });
    this.hooks.validatingAdmission?.(
      {
        operation: 'UPDATE',
        rt,
        subresource,
        name: om.name!,
        namespace: om.namespace,
        object: next,
        oldObject: old,
        user: opts.user,
        dryRun: opts.dryRun,
      },
      opts.warnings,
    );
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
    if (finishedDeleting(rt, next)) {
      this.store.remove(rt.bucket, key, next);
      this.afterDelete(rt, next);
      return this.present(rt, next);
    }
    this.store.put(rt.bucket, key, next);
    this.afterWrite(rt, next);
    return this.present(rt, next);
  }

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
    const patch = decodeBody(body, isApply ? 'application/yaml' : 'application/json');
    const key = this.key(rt, namespace, name);
    const old = this.store.get(rt.bucket, key);

    if (isApply) {
      const applied = checkTypeMeta(rt, patch);
      if (applied.metadata.name !== undefined && applied.metadata.name !== name)
        throw errors.badRequest(
          `the name of the object (${applied.metadata.name}) does not match the name on the URL (${name})`,
        );
      applied.metadata.name = name;
      if (rt.namespaced && applied.metadata.namespace && applied.metadata.namespace !== namespace)
        throw errors.badRequest(
          'the namespace of the provided object does not match the namespace sent on the request',
        );
      fieldValidation(rt, applied, opts);
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
    const obj = checkTypeMeta(rt, next);
    if (obj.metadata.name !== name)
      throw errors.badRequest('metadata.name: the name of a patched object cannot change');
    fieldValidation(rt, obj, opts);
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
    // DeleteOptions.preconditions, checked in kube's order (uid, then resourceVersion), each refused as a Conflict.
    for (const [field, label] of [
      ['uid', 'UID'],
      ['resourceVersion', 'ResourceVersion'],
    ] as const) {
      const want = opts.preconditions?.[field];
      if (want && want !== old.metadata[field])
        throw errors.conflict(
          rt.group,
          rt.plural,
          name,
          `Precondition failed: ${label} in precondition: ${want}, ${label} in object meta: ${old.metadata[field]}`,
        );
    }

    this.hooks.validatingAdmission?.(
      {
        operation: 'DELETE',
        rt,
        name,
        namespace: old.metadata.namespace,
        oldObject: old,
        user: opts.user,
        dryRun: opts.dryRun,
      },
      opts.warnings ?? [],
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

    const graceful = markGracefulDeletion(rt, old, next, opts, finalizers);
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
    if (rt.builtin && rt.plural === 'customresourcedefinitions') unserveCrd(this.store, this.registry, obj);
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
