// A CRD's life in the server, as apiextensions-apiserver's establishing and finalizing controllers keep it: once
// written (or found in the store at start) its served versions are registered and it is marked NamesAccepted and
// Established at once; deleting it (or marking it for deletion) stops serving it, and its custom resources go with it.

import { now } from './clock.ts';
import { crdResources, type ResourceRegistry } from './resources.ts';
import { type K8sObject, objectKey, type Store } from './store.ts';

const clone = <T>(v: T): T => structuredClone(v);

/** Registers the CRD's versions and marks it NamesAccepted + Established. */
export function serveCrd(store: Store, registry: ResourceRegistry, crd: K8sObject): void {
  const name = crd.metadata.name!;
  if (crd.metadata.deletionTimestamp) {
    registry.setCrd(name, []);
    return;
  }
  registry.setCrd(name, crdResources(crd));
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
  store.put('apiextensions.k8s.io/customresourcedefinitions', name, next);
}

// ---- update ----

/** A deleted CRD is no longer served, and its custom resources are removed. */
export function unserveCrd(store: Store, registry: ResourceRegistry, crd: K8sObject): void {
  registry.setCrd(crd.metadata.name!, []);
  const bucket = `${crd.spec.group}/${crd.spec.names.plural}`;
  for (const o of store.list(bucket)) store.remove(bucket, objectKey(o.metadata.namespace, o.metadata.name!));
}
