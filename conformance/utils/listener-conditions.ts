// Upstream's GatewayListenerMustHaveConditions (Gateway API v1.6.1 conformance/utils/kubernetes/helpers.go), used by
// the GEP-91 client certificate validation tests: one listener's conditions polled until they all match. Apart from
// kubernetes.ts so that file stays within the project's size limit.
import type { Kube } from '../../lab/toolkit/kube.ts';
import { waitFor } from '../../lab/toolkit/wait.ts';
import type { TimeoutConfig } from './config.ts';
import { type Cond, findCondition, GW, type NN } from './kubernetes.ts';

/** GatewayListenerMustHaveConditions: the named listener has every condition (an empty reason: any). */
export async function gatewayListenerMustHaveConditions(
  kube: Kube,
  tc: TimeoutConfig,
  gw: NN,
  listener: string,
  conditions: Cond[],
): Promise<void> {
  await waitFor(
    `Gateway ${gw.namespace}/${gw.name} listener ${listener} to have ${JSON.stringify(conditions)}`,
    async () => {
      const g = await kube.get(GW, 'Gateway', gw.name, gw.namespace);
      const l = (g?.status?.listeners ?? []).find((x: any) => x.name === listener);
      if (!l) return { ok: false, seen: `listener ${listener} not found in the Gateway's status` };
      return { ok: conditions.every((c) => findCondition(l.conditions, c.type, c.status, c.reason)), seen: l };
    },
    { timeoutMs: tc.gatewayListenersMustHaveConditions, intervalMs: tc.defaultPollInterval },
  );
}
