// A TCPRoute, UDPRoute or TLSRoute seen by explain: per Gateway parent, what its status says (accepted, backends resolved, with
// the ReferenceGrant that would allow a cross-namespace backend) and whether that Gateway's proxies really hold it: a
// listener whose tcp_proxy (cluster / weighted_clusters) or udp_proxy (on_no_match Route) sends to the route's
// backend clusters (`kube_<ns>_<svc>_<port>`, or `udproute_<ns>_<name>` for a weighted UDPRoute); a TLSRoute's are in
// one of the SNI filter chains of its TLS listener. The control plane names them so (system/controlplane/ir/
// l4-listeners.ts, tls-listeners.ts, xds/translator/l4.ts).
import type { ConfigDump } from '../../toolkit/admin.ts';
import type { KObj } from '../../toolkit/kube.ts';
import { CONTROLLER_NAME } from '../proxies.ts';
import { dumpsRead, isOurs, routeParents } from './gateways.ts';
import { cond, condText, type Finding, find, subjectOf } from './report.ts';
import { backendGrantFix } from './routes.ts';
import type { GatewayKey, World } from './world.ts';

/** The clusters a listener of a config_dump sends to through tcp_proxy or udp_proxy. */
function l4Clusters(dump: ConfigDump): string[] {
  const out: string[] = [];
  for (const c of dump.configs ?? []) {
    if (!String(c['@type']).endsWith('ListenersConfigDump')) continue;
    for (const l of c.dynamic_listeners ?? []) {
      const listener = l.active_state?.listener;
      for (const f of (listener?.filter_chains ?? []).flatMap((fc: any) => fc.filters ?? [])) {
        const t = f.typed_config ?? {};
        if (t.cluster) out.push(t.cluster);
        for (const w of t.weighted_clusters?.clusters ?? []) out.push(w.name);
      }
      for (const f of listener?.listener_filters ?? []) {
        const route = f.typed_config?.matcher?.on_no_match?.action?.typed_config;
        if (route?.cluster) out.push(route.cluster);
        if (f.typed_config?.cluster) out.push(f.typed_config.cluster);
      }
    }
  }
  return out;
}

/** The clusters the control plane gives the route's backends. */
function routeClusters(route: KObj): string[] {
  const ns = route.metadata!.namespace!;
  const refs: { name: string; namespace?: string; port?: number }[] = route.spec?.rules?.[0]?.backendRefs ?? [];
  return [
    ...refs.map((b) => `kube_${b.namespace ?? ns}_${b.name}_${b.port}`),
    ...(route.kind === 'UDPRoute' ? [`udproute_${ns}_${route.metadata!.name}`] : []),
  ];
}

export function l4RouteFindings(world: World, route: KObj): Finding[] {
  const ns = route.metadata!.namespace!;
  const kind = route.kind as 'TCPRoute' | 'UDPRoute' | 'TLSRoute';
  const subject = subjectOf(kind, { namespace: ns, name: route.metadata!.name! });
  const out: Finding[] = [];
  const statuses: any[] = route.status?.parents ?? [];
  for (const parent of routeParents(route)) {
    const pname = `Gateway ${parent.namespace}/${parent.name}`;
    const gw = find(world.gateways, parent.namespace, parent.name);
    const st = statuses.find(
      (s) =>
        s.controllerName === CONTROLLER_NAME &&
        s.parentRef?.name === parent.name &&
        (s.parentRef?.namespace ?? ns) === parent.namespace,
    );
    if (!st) {
      const why = !gw
        ? `its parentRef ${pname} does not exist`
        : !isOurs(world, gw)
          ? `its parent ${pname} is of class ${gw.spec?.gatewayClassName}, not handled by gwvendor`
          : `gwvendor has not written a status for parent ${pname} yet`;
      out.push({ level: 'problem', subject, message: why });
      continue;
    }
    const accepted = cond(st.conditions, 'Accepted');
    const resolved = cond(st.conditions, 'ResolvedRefs');
    out.push(
      accepted?.status === 'True'
        ? { level: 'ok', subject, message: `accepted by ${pname}` }
        : {
            level: 'problem',
            subject,
            message: `not accepted by ${pname}: ${condText(accepted)}: ${accepted?.message ?? ''}`.trim(),
          },
    );
    if (resolved?.status === 'False') {
      out.push({
        level: 'problem',
        subject,
        message: `backends do not resolve: ${condText(resolved)}: ${resolved.message ?? ''}`.trim(),
        details: ['the share of connections (datagrams) of such a backend is refused (dropped) by the proxy'],
        ...(resolved.reason === 'RefNotPermitted' ? backendGrantFix(world, route, kind) : {}),
      });
    } else if (resolved?.status === 'True') out.push({ level: 'ok', subject, message: 'backends resolved' });
    if (gw && isOurs(world, gw) && accepted?.status === 'True' && dumpsRead(world, parent)) {
      out.push(inProxyConfig(world, parent, route, subject, pname));
    }
  }
  if (!routeParents(route).length) {
    out.push({ level: 'problem', subject, message: 'it has no Gateway parentRefs: it attaches to no Gateway' });
  }
  return out;
}

function inProxyConfig(world: World, g: GatewayKey, route: KObj, subject: string, pname: string): Finding {
  const want = routeClusters(route);
  const pods = (world.proxies[`${g.namespace}/${g.name}`]?.pods ?? []).filter((p) => p.dump);
  const holding = pods.filter((p) => l4Clusters(p.dump!).some((c) => want.includes(c)));
  if (holding.length) {
    return {
      level: 'ok',
      subject,
      message: `in the proxy config of ${pname}: a ${route.kind === 'UDPRoute' ? 'udp_proxy' : 'tcp_proxy'} listener to its backends in config_dump of ${holding.map((p) => p.pod).join(', ')}`,
    };
  }
  return {
    level: 'problem',
    subject,
    disagreement: true,
    message: `status says Accepted by ${pname}, but no listener of that Gateway's proxy config_dump sends to its backends`,
    details: [
      'the oldest route on a TCP/UDP listener is the one served: an older route on the same listener wins',
      'otherwise a NACK or a pending push would explain it',
    ],
  };
}
