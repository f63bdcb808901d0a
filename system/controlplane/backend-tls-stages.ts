// The pipeline's BackendTLSPolicy stages (pipeline.ts calls them in its order): each policy resolved on its own
// against the ConfigMaps it names (ir/backend-tls.ts), indexed by the Services it targets for the Gateways' lookup,
// and its status from what every Gateway reported about it.

import type { BackendTlsReport } from './ir/backend-tls.ts';
import { buildBackendTlsInfo } from './ir/backend-tls.ts';
import type { Index, InputCollection, Runtime } from './krt/collection.ts';
import { derive } from './krt/collection.ts';
import type { BackendTLSPolicy, ConfigMap } from './model.ts';
import { servicePolicyLookup } from './service-policy-lookup.ts';
import { backendTlsPolicyStatus, type GatewayReportOf, type StatusUpdate } from './status/build.ts';

/** BackendTLSPolicy → BackendTlsInfo, and the Gateways' lookup of the policies targeting a Service. */
export function deriveBackendTlsInfos(
  rt: Runtime,
  policies: InputCollection<BackendTLSPolicy>,
  configMaps: InputCollection<ConfigMap>,
) {
  const infos = derive(rt, 'BackendTLSPolicyInfos', policies, (ctx, bp) =>
    buildBackendTlsInfo(bp, { configMap: (ns, name) => ctx.fetch(configMaps, `${ns}/${name}`) }),
  );
  return { infos, lookup: servicePolicyLookup(policies, infos) };
}

/** Each BackendTLSPolicy's status: its ancestors from the Gateways' reports (row key `<gateway>|<policy>`). */
export function deriveBackendTlsStatuses(
  rt: Runtime,
  policies: InputCollection<BackendTLSPolicy>,
  reports: Index<GatewayReportOf<BackendTlsReport> & { key: string }>,
) {
  return derive(
    rt,
    'BackendTLSPolicyStatuses',
    policies,
    (ctx, bp, key): StatusUpdate => ({
      key: `backendtlspolicies/${key}`,
      resource: 'backendtlspolicies',
      namespace: bp.metadata.namespace,
      name: bp.metadata.name,
      status: backendTlsPolicyStatus(ctx.fetchIndex(reports, key).sort((a, b) => (a.key < b.key ? -1 : 1))),
    }),
  );
}
