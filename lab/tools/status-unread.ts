// lab:status: Gateway API objects of the kinds users can write (the upstream v1.6.1 CRDs serve them) but the control
// plane does not read: TLSRoute, BackendTLSPolicy... (the Gateway API kinds lab:bundle
// collects, collect/resources.ts, minus system/controlplane/kube/watched.ts, so a kind drops out of this list the
// day the control plane reads it). One attached to a Gateway of one of our classes never gets a status from us and
// carries no traffic: without a word here, a user would meet that as silence. A warning each, naming the Gateway.
import { watchedKind } from '../../system/controlplane/kube/watched.ts';
import type { KObj, Kube } from '../toolkit/kube.ts';
import { GATEWAY_KINDS } from './collect/resources.ts';

const GROUP = 'gateway.networking.k8s.io';

/** The Gateway API kinds the control plane does not read, with the version they are listed at. */
export const UNREAD_KINDS = GATEWAY_KINDS.filter(
  (k) => k.apiVersions[0].startsWith(`${GROUP}/`) && !watchedKind(k.kind),
);

/** Their objects (in `ns`, or everywhere); a kind the cluster does not serve has none. */
export async function readUnread(kube: Kube, ns: string | undefined): Promise<KObj[]> {
  const lists = await Promise.all(
    UNREAD_KINDS.map((k) => kube.list(k.apiVersions[0], k.kind, ns).catch((): KObj[] => [])),
  );
  return lists.flat();
}

/** The Gateways (`namespace/name`) an object names: spec.parentRefs of a route, spec.parentRef of a ListenerSet. */
function parentGateways(o: KObj): string[] {
  const refs: { group?: string; kind?: string; namespace?: string; name: string }[] =
    o.spec?.parentRefs ?? (o.spec?.parentRef ? [o.spec.parentRef] : []);
  return refs
    .filter((r) => (r.group ?? GROUP) === GROUP && (r.kind ?? 'Gateway') === 'Gateway')
    .map((r) => `${r.namespace ?? o.metadata?.namespace}/${r.name}`);
}

/** A warning per object attached to a Gateway of one of our classes (`classes`: their names). */
export function unreadWarnings(
  objs: KObj[],
  gateways: { namespace: string; name: string; class: string }[],
  classes: Set<string>,
): string[] {
  const ours = new Set(gateways.filter((g) => classes.has(g.class)).map((g) => `${g.namespace}/${g.name}`));
  const out: string[] = [];
  for (const o of objs) {
    for (const gw of new Set(parentGateways(o))) {
      if (!ours.has(gw)) continue;
      out.push(
        `${o.kind} ${o.metadata?.namespace}/${o.metadata?.name} → Gateway ${gw}: the control plane does not read ${o.kind}s; it gets no status and carries no traffic`,
      );
    }
  }
  return out;
}
