// Listener isolation as explain reports it for an HTTPRoute or GRPCRoute: on each port of a parent Gateway, the hosts
// whose requests a more specific listener takes while the route is not attached to it (Gateway API Listener docs,
// GatewayHTTPListenerIsolation). The rule is the control plane's own (ir/hostnames.ts isolatedHosts, on
// mostSpecificListenerHost as the IR builder places routes); this module only finds the listeners the route attaches
// to (its parentRefs' sectionName and port) and words the note with the parentRef that would serve those hosts too.
import { intersectHostnames, isolatedHosts } from '../../../system/controlplane/ir/hostnames.ts';
import type { KObj } from '../../toolkit/kube.ts';
import { type Finding, GW_GROUP } from './report.ts';

interface Listener {
  name: string;
  port: number;
  protocol: string;
  hostname?: string;
}

const HTTP_PROTOCOLS = new Set(['HTTP', 'HTTPS']);

/** The listeners of `gw` a parentRef of the route selects (all HTTP ones without sectionName and port). */
function attachedListeners(route: KObj, gw: KObj): Listener[] {
  const ns = route.metadata!.namespace!;
  const listeners: Listener[] = (gw.spec?.listeners ?? []).filter((l: Listener) => HTTP_PROTOCOLS.has(l.protocol));
  const refs = (route.spec?.parentRefs ?? []).filter(
    (p: any) =>
      (p.kind ?? 'Gateway') === 'Gateway' &&
      (p.group ?? GW_GROUP) === GW_GROUP &&
      p.name === gw.metadata!.name &&
      (p.namespace ?? ns) === gw.metadata!.namespace,
  );
  return listeners.filter((l) =>
    refs.some((p: any) => (!p.sectionName || p.sectionName === l.name) && (p.port === undefined || p.port === l.port)),
  );
}

/** Notes for the hosts listener isolation keeps from `route` on Gateway `gw` (none when it is attached everywhere). */
export function isolationFindings(route: KObj, gw: KObj, subject: string): Finding[] {
  const attached = attachedListeners(route, gw);
  const names = new Set(attached.map((l) => l.name));
  const all: Listener[] = (gw.spec?.listeners ?? []).filter((l: Listener) => HTTP_PROTOCOLS.has(l.protocol));
  const out: Finding[] = [];
  for (const l of attached) {
    const onPort = all.filter((x) => x.port === l.port);
    const served = intersectHostnames(l.hostname || undefined, route.spec?.hostnames ?? []);
    const isolated = isolatedHosts(
      onPort.map((x) => x.hostname || undefined),
      l.hostname || undefined,
      served,
    );
    for (const { hosts, listenerHost } of isolated) {
      const other = onPort.find((x) => x.hostname === listenerHost)!;
      if (names.has(other.name)) continue;
      out.push({
        level: 'note',
        subject,
        message:
          `requests for ${hosts} on port ${l.port} go to listener ${other.name} (${listenerHost}), more specific than ` +
          `listener ${l.name}${l.hostname ? ` (${l.hostname})` : ' (any host)'} this route is attached to: its rules ` +
          'do not serve them (listener isolation)',
        details: [
          `to serve them too, add a parentRef {name: ${gw.metadata!.name}, sectionName: ${other.name}} to the route`,
        ],
      });
    }
  }
  return out;
}
