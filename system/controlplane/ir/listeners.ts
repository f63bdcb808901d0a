// A Gateway's listeners, validated as the Gateway API asks (protocol, allowedRoutes.kinds, listeners that share a
// port: one protocol, distinct hostnames), each with the report its status entry is made from. The usable ones are
// what routes attach to (attach-routes.ts) and what gets an Envoy listener (virtual-hosts.ts).
import { GATEWAY_GROUP, type Gateway, type Listener } from '../model.ts';
import { bad, type Outcome, ok } from './types.ts';

export interface ListenerReport {
  name: string;
  port: number;
  supportedKinds: { group: string; kind: string }[];
  attachedRoutes: number;
  accepted: Outcome;
  programmed: Outcome;
  resolvedRefs: Outcome;
  conflicted: Outcome;
}

export interface ListenerState {
  l: Listener;
  report: ListenerReport;
  /** Accepted, without conflicts, admitting a route kind: it serves traffic. */
  usable: boolean;
  /** It admits HTTPRoutes. */
  kindsOk: boolean;
}

const HTTP_ROUTE_KIND = { group: GATEWAY_GROUP, kind: 'HTTPRoute' };

/** Every listener of the Gateway, in spec order, with its report. */
export function validateListeners(gw: Gateway): ListenerState[] {
  const states = (gw.spec?.listeners ?? []).map(validateListener);
  markConflicts(states);
  for (const s of states) {
    // Conflicted is reported True when there IS a conflict: outcome.ok false means "conflicted".
    if (!s.report.conflicted.ok) s.usable = false;
    // A listener that admits no route kind serves nothing: it is not programmed (and gets no Envoy listener).
    if (!s.kindsOk) s.usable = false;
    if (!s.usable) {
      s.report.programmed = bad(
        'Invalid',
        !s.report.accepted.ok
          ? s.report.accepted.message
          : !s.report.conflicted.ok
            ? s.report.conflicted.message
            : s.report.resolvedRefs.message,
      );
    }
  }
  return states;
}

/** One listener on its own: protocol and route kinds. */
function validateListener(l: Listener): ListenerState {
  const http = l.protocol === 'HTTP';
  let supportedKinds = http ? [HTTP_ROUTE_KIND] : [];
  let resolvedRefs = ok('ResolvedRefs', 'route kinds resolved');
  let kindsOk = http;
  const kinds = l.allowedRoutes?.kinds;
  if (http && kinds?.length) {
    const valid = kinds.filter((k) => (k.group ?? GATEWAY_GROUP) === GATEWAY_GROUP && k.kind === 'HTTPRoute');
    const invalid = kinds.filter((k) => !valid.includes(k));
    supportedKinds = valid.length ? [HTTP_ROUTE_KIND] : [];
    kindsOk = valid.length > 0;
    if (invalid.length) {
      resolvedRefs = bad(
        'InvalidRouteKinds',
        `unsupported route kinds: ${invalid.map((k) => `${k.group ?? GATEWAY_GROUP}/${k.kind}`).join(', ')} (supported: HTTPRoute)`,
      );
    }
  }
  const accepted = http
    ? ok('Accepted', 'listener accepted')
    : bad('UnsupportedProtocol', `protocol ${l.protocol} is not supported (supported: HTTP)`);
  return {
    l,
    kindsOk,
    usable: http,
    report: {
      name: l.name,
      port: l.port,
      supportedKinds,
      attachedRoutes: 0,
      accepted,
      programmed: ok('Programmed', 'listener programmed'),
      resolvedRefs,
      conflicted: ok('NoConflicts', 'no conflicts'),
    },
  };
}

/** Listeners sharing a port must agree on the protocol and differ in hostname. */
function markConflicts(states: ListenerState[]): void {
  const byPort = new Map<number, ListenerState[]>();
  for (const s of states) byPort.set(s.l.port, [...(byPort.get(s.l.port) ?? []), s]);
  for (const group of byPort.values()) {
    if (group.length < 2) continue;
    const protocols = new Set(group.map((s) => s.l.protocol));
    for (const s of group) {
      if (protocols.size > 1) {
        s.report.conflicted = bad(
          'ProtocolConflict',
          `port ${s.l.port} is used with protocols ${[...protocols].join(', ')}`,
        );
        continue;
      }
      const same = group.filter((o) => o !== s && (o.l.hostname ?? '') === (s.l.hostname ?? ''));
      if (same.length) {
        s.report.conflicted = bad(
          'HostnameConflict',
          `listeners ${[s, ...same].map((x) => x.l.name).join(', ')} share port ${s.l.port} and hostname ${s.l.hostname || '(any)'}`,
        );
      }
    }
  }
}
