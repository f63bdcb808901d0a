// A Gateway seen by explain: is it ours, which routes its proxies hold (with provenance), and what is wrong with it —
// its status, its listeners' (listeners.ts: certificates that do not resolve, with the ReferenceGrant that fixes a
// RefNotPermitted), proxy pods that do not run (with why), and configuration its proxies rejected and still reject.
import { dynamicErrors, PROVENANCE_KEY, routeConfigs } from '../../toolkit/admin.ts';
import { notReadyReasons } from '../../toolkit/describe.ts';
import type { Condition, KObj } from '../../toolkit/kube.ts';
import { CONTROLLER_NAME } from '../proxies.ts';
import { listenerFindings } from './listeners.ts';
import { cond, condText, type Finding, find, GW_GROUP, subjectOf } from './report.ts';
import { type GatewayKey, roleOf, type World } from './world.ts';

/**
 * The Gateways a route's parentRefs name (Gateway kind only), as keys; `withListener`: with the listener a
 * sectionName names (what explain checks of that Gateway for the route).
 */
export function routeParents(route: KObj, opts: { withListener?: boolean } = {}): GatewayKey[] {
  const ns = route.metadata!.namespace!;
  return (route.spec?.parentRefs ?? [])
    .filter((p: any) => (p.kind ?? 'Gateway') === 'Gateway' && (p.group ?? GW_GROUP) === GW_GROUP)
    .map((p: any) => ({
      namespace: p.namespace ?? ns,
      name: p.name,
      ...(opts.withListener && p.sectionName ? { listener: p.sectionName } : {}),
    }));
}

export function isOurs(world: World, gw: KObj): boolean {
  const cls = world.gatewayClasses.find((c) => c.metadata?.name === gw.spec?.gatewayClassName);
  return cls?.spec?.controllerName === CONTROLLER_NAME;
}

/** The routes in one Gateway's proxy configs (every ready pod whose config_dump was read), with their provenance. */
export function configRoutes(
  world: World,
  g: GatewayKey,
): { pod: string; name: string; provenance: Record<string, string> }[] {
  const out: { pod: string; name: string; provenance: Record<string, string> }[] = [];
  for (const p of world.proxies[`${g.namespace}/${g.name}`]?.pods ?? []) {
    if (!p.dump) continue;
    for (const rc of routeConfigs(p.dump)) {
      for (const vh of rc.virtual_hosts ?? []) {
        for (const r of vh.routes ?? []) {
          out.push({ pod: p.pod, name: r.name ?? '', provenance: r.metadata?.filter_metadata?.[PROVENANCE_KEY] ?? {} });
        }
      }
    }
  }
  return out;
}

export function dumpsRead(world: World, g: GatewayKey): number {
  return (world.proxies[`${g.namespace}/${g.name}`]?.pods ?? []).filter((p) => p.dump).length;
}

export const routePrefix = (ns: string, name: string) => `httproute/${ns}/${name}/`;

/**
 * What is wrong with a Gateway and its proxies: status, its listeners' (all, or `g.listener`; none with
 * `listeners: false`, for a policy's Gateways), pods that do not run, configuration they rejected. `explained`: the
 * Gateway is what is explained (a listener it lacks is then its problem, not a route's, whose status says so).
 */
export function gatewayFindings(
  world: World,
  g: GatewayKey,
  opts: { listeners?: boolean; explained?: boolean } = {},
): Finding[] {
  const subject = subjectOf('Gateway', g);
  const gw = find(world.gateways, g.namespace, g.name);
  if (!gw) {
    return [
      {
        level: 'problem',
        subject,
        message: `Gateway ${g.namespace}/${g.name} does not exist`,
        details: [`list Gateways with: kubectl get gateways -A`],
      },
    ];
  }
  if (!isOurs(world, gw)) {
    return [
      {
        level: 'problem',
        subject,
        message: `GatewayClass ${gw.spec?.gatewayClassName} is not handled by gwvendor (controllerName ${CONTROLLER_NAME}): nothing of this Gateway is programmed here`,
      },
    ];
  }
  const out: Finding[] = [];
  const conds: Condition[] = gw.status?.conditions ?? [];
  for (const type of ['Accepted', 'Programmed']) {
    const c = cond(conds, type);
    if (c?.status === 'False') {
      out.push({ level: 'problem', subject, message: `${condText(c)}: ${c.message ?? ''}`.trim() });
    }
  }
  if (opts.listeners !== false) out.push(...listenerFindings(world, gw, g, g.listener, opts.explained === true));
  const proxies = world.proxies[`${g.namespace}/${g.name}`];
  if (proxies) {
    const pods = proxies.pods;
    if (!pods.length) {
      out.push({
        level: 'problem',
        subject,
        message: `no proxy pod exists for the Gateway`,
        details: [`kubectl -n ${g.namespace} describe deployment ${g.name}`, `kubectl -n ${g.namespace} get events`],
      });
    } else if (!pods.some((p) => p.ready)) {
      for (const p of pods) {
        const reasons = notReadyReasons(p.summary);
        const events = lastEvents(p.summary.events);
        out.push({
          level: 'problem',
          subject,
          message: `the proxy pod ${p.pod} is not running: ${reasons.join('; ') || `phase ${p.summary.phase}`}`,
          details: [...events, `kubectl -n ${g.namespace} describe pod ${p.pod}`],
        });
      }
    } else {
      const ready = pods.filter((p) => p.ready);
      out.push({
        level: 'ok',
        subject,
        message: `proxy running: ${ready.map((p) => p.pod).join(', ')}${ready.length < pods.length ? ` (${pods.length - ready.length} more not ready)` : ''}`,
      });
    }
    out.push(...nackFindings(world, g));
  }
  return out;
}

/** The pod's last few distinct events, warnings first: repeated back-off lines would hide why the pull failed. */
function lastEvents(events: { type: string; reason: string; message: string }[]): string[] {
  const warnings = events.filter((e) => e.type === 'Warning');
  const pick = warnings.length ? warnings : events;
  const lines = pick.map((e) => `event ${e.type} ${e.reason}: ${e.message}`);
  return [...new Set(lines.reverse())].slice(0, 4).reverse();
}

/** Configuration a proxy of this Gateway rejected and still rejects: from /snapshots/xds, else from config_dump. */
function nackFindings(world: World, g: GatewayKey): Finding[] {
  const subject = subjectOf('Gateway', g);
  const proxies = world.proxies[`${g.namespace}/${g.name}`];
  const out: Finding[] = [];
  const seen = new Set<string>();
  for (const [node, types] of Object.entries(proxies?.xds ?? {})) {
    for (const [type, st] of Object.entries(types)) {
      const nack = st.last_nack;
      const current =
        st.status === 'NACKED' ||
        (!!nack && Number(nack.version) > Number(st.version_acked ?? Number.NEGATIVE_INFINITY));
      if (!nack || !current) continue;
      seen.add(type);
      out.push({
        level: 'problem',
        subject,
        message: `proxy ${node} rejected (NACK) the ${type} of version ${nack.version}: ${nack.detail}`,
        details: [
          `it keeps serving version ${st.version_acked ?? '(none)'}, its last accepted one`,
          `/snapshots/xds on the control plane (npm run lab:pf -- controlplane) shows last_nack for role ${roleOf(g)}`,
        ],
      });
    }
  }
  for (const p of proxies?.pods ?? []) {
    if (!p.dump) continue;
    for (const e of dynamicErrors(p.dump)) {
      const type = shortType(e.typeUrl);
      if (seen.has(type)) continue;
      seen.add(type);
      out.push({
        level: 'problem',
        subject,
        message: `proxy pod ${p.pod} holds rejected ${type} ${e.name ?? ''}: ${e.error}`.replace(/ +/g, ' '),
        details: ['config_dump error_state; the proxy keeps serving its last accepted configuration'],
      });
    }
  }
  return out;
}

function shortType(typeUrl: string): string {
  if (/Route/.test(typeUrl)) return 'routes';
  if (/Listener/.test(typeUrl)) return 'listeners';
  if (/Endpoint|ClusterLoadAssignment/.test(typeUrl)) return 'endpoints';
  if (/Cluster/.test(typeUrl)) return 'clusters';
  return typeUrl;
}
