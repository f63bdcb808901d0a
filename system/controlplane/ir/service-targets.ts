// The Services a backend policy targets, read once for BackendTLSPolicy (backend-tls.ts) and BackendConfigPolicy
// (backend-config-policy.ts): its targetRefs of the core group's kind Service, in the policy's own namespace (a
// policy's targetRefs are local references: Gateway API's LocalPolicyTargetReferenceWithSectionName), each with the
// port name its sectionName gives; the index keys the pipeline finds a Service's policies by; and the name of the
// Service port a cluster sends to, which a sectionName must name.
import type { KObject, Service } from '../model.ts';
import type { ClusterIR } from './types.ts';

/** One Service a policy targets; sectionName: a port name of it (absent: the whole Service). */
export interface ServiceTarget {
  namespace: string;
  service: string;
  sectionName?: string;
}

export type TargetingPolicy = KObject<{
  targetRefs?: { group?: string; kind: string; name: string; sectionName?: string }[];
}>;

/** The policy's targetRefs that name a Service (core group), in order. */
export function serviceTargetRefs(p: TargetingPolicy): { name: string; sectionName?: string }[] {
  return (p.spec?.targetRefs ?? []).filter((t) => (t.group ?? '') === '' && t.kind === 'Service');
}

/** The Services the policy targets, in the policy's namespace. */
export function serviceTargets(p: TargetingPolicy): ServiceTarget[] {
  const ns = p.metadata.namespace ?? 'default';
  return serviceTargetRefs(p).map((t) => ({
    namespace: ns,
    service: t.name,
    ...(t.sectionName ? { sectionName: t.sectionName } : {}),
  }));
}

/** Index keys of a policy's targets: `<ns>/<service>` (the Service, whatever the section), each once. */
export function serviceTargetKeys(p: TargetingPolicy): string[] {
  return [...new Set(serviceTargets(p).map((t) => `${t.namespace}/${t.service}`))];
}

/** The name of the Service port the cluster sends to (what a target's sectionName names), if it has one. */
export function clusterPortName(
  c: ClusterIR,
  service: (namespace: string, name: string) => Service | undefined,
): string | undefined {
  return service(c.namespace, c.service)?.spec?.ports?.find((p) => p.port === c.port)?.name;
}
