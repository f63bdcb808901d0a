// The pipeline's BackendConfigPolicy stages (pipeline.ts calls them in its order): each policy validated on its own
// (ir/backend-config-policy.ts), indexed by the Services it targets for the Gateways' lookup, and its status from what
// every Gateway reported about it (status/build.ts policyStatus, as a TrafficPolicy's: Accepted, Attached/Overridden,
// Programmed=False when a proxy rejected a version it was in).
import {
  type BackendConfigInfo,
  type BackendConfigReport,
  buildBackendConfigInfo,
} from './ir/backend-config-policy.ts';
import type { Collection, Ctx, Index, InputCollection, Runtime } from './krt/collection.ts';
import { derive } from './krt/collection.ts';
import type { BackendConfigPolicy } from './model.ts';
import { servicePolicyLookup } from './service-policy-lookup.ts';
import { type GatewayReportOf, policyStatus, type Rejection, type StatusUpdate } from './status/build.ts';

/** BackendConfigPolicy → BackendConfigInfo, and the Gateways' lookup of the policies targeting a Service. */
export function deriveBackendConfigInfos(rt: Runtime, policies: InputCollection<BackendConfigPolicy>) {
  const infos = derive(rt, 'BackendConfigPolicyInfos', policies, (_ctx, p) => buildBackendConfigInfo(p));
  return { infos, lookup: servicePolicyLookup(policies, infos) };
}

/** Each BackendConfigPolicy's status: its ancestors from the Gateways' reports (row key `<gateway>|<policy>`). */
export function deriveBackendConfigStatuses(
  rt: Runtime,
  policies: InputCollection<BackendConfigPolicy>,
  infos: Collection<BackendConfigInfo>,
  reports: Index<GatewayReportOf<BackendConfigReport> & { key: string }>,
  rejectionsOf: (ctx: Ctx, key: string) => Rejection[],
) {
  return derive(rt, 'BackendConfigPolicyStatuses', policies, (ctx, p, key): StatusUpdate | undefined => {
    const info = ctx.fetch(infos, key);
    if (!info) return undefined;
    const rows = ctx.fetchIndex(reports, key).sort((a, b) => (a.key < b.key ? -1 : 1));
    return {
      key: `backendconfigpolicies/${key}`,
      resource: 'backendconfigpolicies',
      namespace: p.metadata.namespace,
      name: p.metadata.name,
      status: policyStatus(info, rows, rejectionsOf(ctx, `BackendConfigPolicy/${key}`)),
    };
  });
}
