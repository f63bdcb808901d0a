// Which namespaces a bundle covers: every namespace that holds a Gateway API or gwvendor resource, every namespace
// those resources point at (a backend, an extension's Service, a parent Gateway elsewhere), and the control plane's.
import { SYSTEM_NAMESPACE } from '../../install.ts';
import type { KObj, Kube } from '../../toolkit/kube.ts';
import { Inventory } from '../collect/inventory.ts';
import { GATEWAY_KINDS } from '../collect/resources.ts';

/** Every string under a `namespace` key anywhere in a spec. */
export function referencedNamespaces(spec: unknown, out: Set<string> = new Set()): Set<string> {
  if (Array.isArray(spec)) {
    for (const v of spec) referencedNamespaces(v, out);
  } else if (spec && typeof spec === 'object') {
    for (const [k, v] of Object.entries(spec)) {
      if (k === 'namespace' && typeof v === 'string' && v) out.add(v);
      else referencedNamespaces(v, out);
    }
  }
  return out;
}

export interface BundleNamespaces {
  namespaces: string[];
  /** What could not be listed (the bundle then covers less, and says so). */
  errors: string[];
}

export async function bundleNamespaces(kube: Kube): Promise<BundleNamespaces> {
  const all = new Inventory(kube);
  const found = new Set<string>([SYSTEM_NAMESPACE]);
  const errors: string[] = [];
  await Promise.all(
    GATEWAY_KINDS.filter((k) => k.namespaced).map(async (ref) => {
      try {
        for (const o of ((await all.list(ref))?.items ?? []) as KObj[]) {
          if (o.metadata?.namespace) found.add(o.metadata.namespace);
          referencedNamespaces(o.spec, found);
        }
      } catch (err) {
        errors.push(`listing ${ref.kind} in all namespaces: ${(err as Error).message}`);
      }
    }),
  );
  return { namespaces: [...found].sort(), errors };
}
