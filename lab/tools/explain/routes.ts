// An HTTPRoute or GRPCRoute seen by explain: its parent statuses, whether its backends resolve (with the grant that would allow a
// cross-namespace one), and whether the proxies of its Gateways really hold it.
import { referenceAllowed } from '../../../system/controlplane/ir/refgrant.ts';
import type { ReferenceGrant } from '../../../system/controlplane/model.ts';
import type { KObj } from '../../toolkit/kube.ts';
import { CONTROLLER_NAME } from '../proxies.ts';
import { configRoutes, dumpsRead, isOurs, routeParents, routePrefix } from './gateways.ts';
import { isolationFindings } from './isolation.ts';
import { referenceGrantYaml } from './refgrant-yaml.ts';
import { cond, condText, type Finding, find, GW_GROUP, subjectOf } from './report.ts';
import type { World } from './world.ts';

export function routeFindings(world: World, route: KObj): Finding[] {
  const ns = route.metadata!.namespace!;
  const name = route.metadata!.name!;
  const kind: 'HTTPRoute' | 'GRPCRoute' = route.kind === 'GRPCRoute' ? 'GRPCRoute' : 'HTTPRoute';
  const subject = subjectOf(kind, { namespace: ns, name });
  const out: Finding[] = [];
  const statuses: any[] = route.status?.parents ?? [];
  for (const parent of routeParents(route)) {
    const st = statuses.find(
      (s) =>
        s.controllerName === CONTROLLER_NAME &&
        s.parentRef?.name === parent.name &&
        (s.parentRef?.namespace ?? ns) === parent.namespace,
    );
    const gw = find(world.gateways, parent.namespace, parent.name);
    const pname = `Gateway ${parent.namespace}/${parent.name}`;
    if (!st) {
      out.push({
        level: 'problem',
        subject,
        message: !gw
          ? `its parentRef ${pname} does not exist`
          : !isOurs(world, gw)
            ? `its parent ${pname} is of class ${gw.spec?.gatewayClassName}, not handled by gwvendor`
            : `gwvendor has not written a status for parent ${pname} yet`,
      });
      continue;
    }
    const accepted = cond(st.conditions, 'Accepted');
    const resolved = cond(st.conditions, 'ResolvedRefs');
    if (accepted?.status !== 'True') {
      out.push({
        level: 'problem',
        subject,
        message: `not accepted by ${pname}: ${condText(accepted)}${accepted?.message ? `: ${accepted.message}` : ''}`,
      });
    } else {
      out.push({ level: 'ok', subject, message: `accepted by ${pname}` });
      if (gw) out.push(...isolationFindings(route, gw, subject));
    }
    if (resolved?.status === 'False') {
      out.push({
        level: 'problem',
        subject,
        message: `backends do not resolve: ${condText(resolved)}: ${resolved.message ?? ''}`.trim(),
        details: [
          kind === 'GRPCRoute'
            ? 'an RPC matching such a rule gets gRPC status UNAVAILABLE (14) from the proxy'
            : 'a request matching such a rule gets HTTP 500 from the proxy',
        ],
        ...(resolved.reason === 'RefNotPermitted' ? backendGrantFix(world, route, kind) : {}),
      });
    } else if (resolved?.status === 'True') {
      out.push({ level: 'ok', subject, message: `backends resolved` });
    }
    const partly = cond(st.conditions, 'PartiallyInvalid');
    if (partly?.status === 'True') {
      out.push({
        level: 'problem',
        subject,
        message: `partly invalid, the invalid rules are left out: ${partly.message ?? partly.reason ?? ''}`,
      });
    }
    const programmed = cond(st.conditions, 'Programmed');
    if (programmed?.status === 'False') {
      out.push({ level: 'problem', subject, message: `${condText(programmed)}: ${programmed.message ?? ''}`.trim() });
    }
    // What the proxies actually hold of this route.
    if (gw && isOurs(world, gw) && dumpsRead(world, parent)) {
      const inConfig = configRoutes(world, parent).filter((r) => r.name.startsWith(routePrefix(ns, name, kind)));
      const pods = [...new Set(inConfig.map((r) => r.pod))];
      if (inConfig.length && accepted?.status === 'True') {
        out.push({
          level: 'ok',
          subject,
          message: `in the proxy config of ${pname}: ${inConfig.length / Math.max(pods.length, 1)} route(s) in config_dump of ${pods.join(', ')}`,
        });
      } else if (!inConfig.length && accepted?.status === 'True') {
        out.push({
          level: 'problem',
          subject,
          disagreement: true,
          message: `status says Accepted by ${pname}, but no route of it is in that Gateway's proxy config_dump`,
          details: ['the status and the configuration disagree; a NACK or a pending push would explain it'],
        });
      } else if (inConfig.length && accepted?.status !== 'True') {
        out.push({
          level: 'problem',
          subject,
          disagreement: true,
          message: `status says not Accepted by ${pname}, yet ${inConfig.length} route(s) of it are in its proxy config_dump`,
        });
      }
    }
  }
  const viaSets = (route.spec?.parentRefs ?? []).filter((p: any) => p.kind === 'ListenerSet');
  for (const p of viaSets) {
    const st = statuses.find(
      (s) =>
        s.controllerName === CONTROLLER_NAME && s.parentRef?.kind === 'ListenerSet' && s.parentRef?.name === p.name,
    );
    const accepted = st && cond(st.conditions, 'Accepted');
    // explain does not follow a ListenerSet to its Gateway's proxies yet: what its status says, as a note.
    out.push({
      level: accepted?.status === 'False' ? 'problem' : 'note',
      subject,
      message: `parentRef ListenerSet ${p.namespace ?? ns}/${p.name}: ${accepted ? `${condText(accepted)}${accepted.message ? `: ${accepted.message}` : ''}` : 'no status from gwvendor'} (explain does not check ListenerSet listeners in the proxy config)`,
    });
  }
  if (!routeParents(route).length && !viaSets.length) {
    out.push({ level: 'problem', subject, message: 'it has no parentRefs: it attaches to no Gateway' });
  }
  return out;
}

/** For a route whose cross-namespace backendRefs are not permitted: the grants that would allow them. */
export function backendGrantFix(
  world: World,
  route: KObj,
  kind: 'HTTPRoute' | 'GRPCRoute' | 'TCPRoute' | 'UDPRoute' | 'TLSRoute' = 'HTTPRoute',
): Pick<Finding, 'yaml'> {
  const ns = route.metadata!.namespace!;
  const grants = world.grants as unknown as ReferenceGrant[];
  const docs: string[] = [];
  for (const rule of route.spec?.rules ?? []) {
    for (const b of rule.backendRefs ?? []) {
      const to = { group: b.group ?? '', kind: b.kind ?? 'Service', namespace: b.namespace ?? ns, name: b.name };
      const from = { group: GW_GROUP, kind, namespace: ns };
      if (to.namespace === ns || referenceAllowed(grants, from, to)) continue;
      const yaml = referenceGrantYaml(from, to);
      if (!docs.includes(yaml)) docs.push(yaml);
    }
  }
  return docs.length ? { yaml: docs.join('---\n') } : {};
}
