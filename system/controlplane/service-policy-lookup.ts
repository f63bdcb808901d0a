// How a Gateway finds the backend policies that target a Service (BackendTLSPolicy, BackendConfigPolicy alike): the
// policies indexed by the `<namespace>/<service>` keys of their targetRefs (ir/service-targets.ts), each read as the
// info its stage derived. Reads go through the Gateway's Ctx, so a policy that starts or stops targeting the Service,
// or whose info changes, recomputes that Gateway.
import { serviceTargetKeys, type TargetingPolicy } from './ir/service-targets.ts';
import { type Collection, type Ctx, fetchDerived, type InputCollection } from './krt/collection.ts';
import { keyOf } from './model.ts';

/** The lookup, per Gateway Ctx: (namespace, service) → the infos of the policies targeting it, in index order. */
export function servicePolicyLookup<P extends TargetingPolicy, I>(
  policies: InputCollection<P>,
  infos: Collection<I>,
): (ctx: Ctx) => (namespace: string, service: string) => I[] {
  const byService = policies.index('service', serviceTargetKeys);
  return (ctx) => (namespace, service) => fetchDerived(ctx, byService, `${namespace}/${service}`, infos, keyOf);
}
