// A Gateway's listeners, validated as the Gateway API asks (protocol, allowedRoutes.kinds, listeners that share a
// port: one protocol, distinct hostnames), each with the report its status entry is made from. The usable ones are
// what routes attach to (attach-routes.ts) and what gets an Envoy listener (virtual-hosts.ts).
// HTTPS listeners get their statuses as the spec (v1.6.1 gateway_types.go, ListenerConditionResolvedRefs) and the
// conformance tests GatewayInvalidTLSConfiguration and GatewaySecret*ReferenceGrant ask: Accepted, ResolvedRefs
// False/InvalidCertificateRef for a certificateRef that is not a core Secret, False/RefNotPermitted for a Secret in
// another namespace that no ReferenceGrant allows. They are not served yet (TLS termination in the proxy is the issue
// "HTTPS, TLS passthrough, HTTP/2…"): Programmed=False/Pending says so, and they get no Envoy listener. A Secret that
// does not exist, or does not hold a PEM certificate and private key in tls.crt and tls.key, is InvalidCertificateRef
// (conformance GatewayInvalidTLSConfiguration: nonexistent and malformed).
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { GATEWAY_GROUP, type Gateway, type Listener, type ReferenceGrant, type Secret } from '../model.ts';
import { missingGrantMessage, referenceAllowed } from './refgrant.ts';
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
  /** Accepted, without conflicts, admitting a route kind, its references resolved (served or not). */
  valid: boolean;
  /**
   * Routes attach to it and count in its attachedRoutes: accepted, without conflicts, admitting a route kind, even
   * with unresolved references or not served (conformance GatewayWithAttachedRoutes, GatewayModifyListeners).
   */
  attachable: boolean;
}

const HTTP_ROUTE_KIND = { group: GATEWAY_GROUP, kind: 'HTTPRoute' };

/** What listeners' certificateRefs are resolved against. */
export interface ListenerRefs {
  grants: (namespace: string) => ReferenceGrant[];
  secret: (namespace: string, name: string) => Secret | undefined;
}

const NO_REFS: ListenerRefs = { grants: () => [], secret: () => undefined };

/** Every listener of the Gateway, in spec order, with its report. */
export function validateListeners(gw: Gateway, refs: ListenerRefs = NO_REFS): ListenerState[] {
  const ns = gw.metadata.namespace ?? 'default';
  const states = (gw.spec?.listeners ?? []).map((l) => validateListener(l, ns, refs));
  markConflicts(states);
  for (const s of states) {
    s.attachable = s.report.accepted.ok && s.report.conflicted.ok && s.kindsOk;
    s.valid = s.attachable && s.report.resolvedRefs.ok;
    // Conflicted is reported True when there IS a conflict: outcome.ok false means "conflicted".
    if (!s.report.conflicted.ok) s.usable = false;
    // A listener that admits no route kind serves nothing: it is not programmed (and gets no Envoy listener).
    if (!s.kindsOk) s.usable = false;
    if (s.valid && s.l.protocol === 'HTTPS') {
      s.report.programmed = bad(
        'Pending',
        'HTTPS listeners are not served yet (TLS termination in the proxy is not implemented): no proxy listener',
      );
    } else if (!s.usable) {
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

/** Why a Secret cannot serve as a certificate, or undefined when tls.crt and tls.key hold a PEM certificate and key. */
export function certificateProblem(secret: Secret): string | undefined {
  const crt = secret.data?.['tls.crt'];
  const key = secret.data?.['tls.key'];
  if (!crt || !key) return 'has no tls.crt and tls.key';
  try {
    new X509Certificate(Buffer.from(crt, 'base64'));
  } catch (err) {
    return `tls.crt is not a PEM certificate (${(err as Error).message})`;
  }
  try {
    createPrivateKey(Buffer.from(key, 'base64'));
  } catch (err) {
    return `tls.key is not a PEM private key (${(err as Error).message})`;
  }
  return undefined;
}

/**
 * An HTTPS listener's certificateRefs: core Secrets, in the Gateway's namespace or granted by a ReferenceGrant, that
 * exist and hold a certificate and key.
 */
function certificateRefsOutcome(l: Listener, gwNs: string, refs: ListenerRefs): Outcome {
  for (const [i, ref] of (l.tls?.certificateRefs ?? []).entries()) {
    const group = ref.group ?? '';
    const kind = ref.kind ?? 'Secret';
    const where = `listener ${l.name}: tls.certificateRefs[${i}]`;
    if (group !== '' || kind !== 'Secret') {
      return bad('InvalidCertificateRef', `${where}: ${group || 'core'}/${kind} is not supported (only core Secrets)`);
    }
    const to = { group: '', kind: 'Secret', namespace: ref.namespace ?? gwNs, name: ref.name };
    const from = { group: GATEWAY_GROUP, kind: 'Gateway', namespace: gwNs };
    if (!referenceAllowed(refs.grants(to.namespace), from, to)) {
      return bad('RefNotPermitted', `${where}: ${missingGrantMessage(from, to)}`);
    }
    const secret = refs.secret(to.namespace, to.name);
    if (!secret) return bad('InvalidCertificateRef', `${where}: Secret ${to.namespace}/${to.name} does not exist`);
    const problem = certificateProblem(secret);
    if (problem) return bad('InvalidCertificateRef', `${where}: Secret ${to.namespace}/${to.name} ${problem}`);
  }
  return ok('ResolvedRefs', 'references resolved');
}

/** One listener on its own: protocol, route kinds, certificate references. */
function validateListener(l: Listener, gwNs: string, refs: ListenerRefs): ListenerState {
  const https = l.protocol === 'HTTPS';
  const http = l.protocol === 'HTTP' || https;
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
  if (https && resolvedRefs.ok) resolvedRefs = certificateRefsOutcome(l, gwNs, refs);
  const accepted = http
    ? ok('Accepted', 'listener accepted')
    : bad('UnsupportedProtocol', `protocol ${l.protocol} is not supported (supported: HTTP, HTTPS)`);
  return {
    l,
    kindsOk,
    valid: false,
    attachable: false,
    usable: http && !https,
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
