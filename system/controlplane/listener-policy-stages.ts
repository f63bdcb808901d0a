// The pipeline's ListenerPolicy stages (pipeline.ts calls them in its order): each policy validated on its own
// (ir/listener-policy.ts), indexed by the Gateways it targets for the Gateways' lookup, and its status from what
// every Gateway reported about it (status/build.ts policyStatus, as a TrafficPolicy's).

import { buildListenerPolicyInfo, type ListenerPolicyInfo, listenerPolicyTargetKeys } from './ir/listener-policy.ts';
import type { PolicyAncestorReport } from './ir/policy-reports.ts';
import type { ValidationMode } from './ir/types.ts';
import type { Collection, Ctx, Index, InputCollection, Runtime } from './krt/collection.ts';
import { derive, fetchDerived } from './krt/collection.ts';
import { keyOf, type ListenerPolicy } from './model.ts';
import { type GatewayReportOf, policyStatus, type Rejection, type StatusUpdate } from './status/build.ts';

/** ListenerPolicy → ListenerPolicyInfo, and the Gateways' lookup of the policies naming a Gateway. */
export function deriveListenerPolicyInfos(
  rt: Runtime,
  policies: InputCollection<ListenerPolicy>,
  mode: ValidationMode,
) {
  const infos = derive(rt, 'ListenerPolicyInfos', policies, (_ctx, lp) => buildListenerPolicyInfo(lp, mode));
  const byGateway = policies.index('gateway', listenerPolicyTargetKeys);
  const lookup = (ctx: Ctx) => (ns: string, gw: string) =>
    fetchDerived(ctx, byGateway, `Gateway/${ns}/${gw}`, infos, keyOf);
  return { infos, lookup };
}

/** What the status stage reads of the pipeline (pipeline.ts's Pipeline has these). */
export interface ListenerPolicyInputs {
  listenerPoliciesIn: InputCollection<ListenerPolicy>;
  listenerPolicies: Collection<ListenerPolicyInfo>;
  rejections: InputCollection<{ key: string; rejections: Rejection[] }>;
}

/** Each ListenerPolicy's status: its ancestors from the Gateways' reports (row key `<gateway>|<policy>`). */
export function deriveListenerPolicyStatuses(
  rt: Runtime,
  p: ListenerPolicyInputs,
  reports: Index<GatewayReportOf<PolicyAncestorReport> & { key: string }>,
) {
  return derive(rt, 'ListenerPolicyStatuses', p.listenerPoliciesIn, (ctx, lp, key): StatusUpdate | undefined => {
    const info = ctx.fetch(p.listenerPolicies, key);
    if (!info) return undefined;
    const rows = ctx.fetchIndex(reports, key).sort((a, b) => (a.key < b.key ? -1 : 1));
    const rejections = ctx.fetch(p.rejections, `ListenerPolicy/${key}`)?.rejections ?? [];
    return {
      key: `listenerpolicies/${key}`,
      resource: 'listenerpolicies',
      namespace: lp.metadata.namespace,
      name: lp.metadata.name,
      status: policyStatus(info, rows, rejections),
    };
  });
}
