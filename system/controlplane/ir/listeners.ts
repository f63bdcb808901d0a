// A Gateway's listeners, and those of the ListenerSets attached to it, validated as the Gateway API asks (protocol:
// HTTP, TCP or UDP with the route kind each carries; allowedRoutes.kinds; listeners that share a port: one protocol,
// distinct hostnames), each with the report its status entry is made from. The usable ones are
// what routes attach to (attach-routes.ts) and what gets an Envoy listener (virtual-hosts.ts).
// HTTPS listeners get their statuses as the spec (v1.6.1 gateway_types.go, ListenerConditionResolvedRefs) and the
// conformance tests GatewayInvalidTLSConfiguration and GatewaySecret*ReferenceGrant ask: Accepted, ResolvedRefs
// False/InvalidCertificateRef for a certificateRef that is not a core Secret, or a Secret that does not exist or does
// not hold a PEM certificate and its key in tls.crt and tls.key (a key not matching the certificate included),
// False/RefNotPermitted for a Secret in another namespace that no ReferenceGrant allows. One whose references resolve is served (tls.mode Terminate: the proxy terminates TLS
// with the Secrets' certificates, carried in `certificates`); one whose references do not is not programmed, but
// routes still attach to it.
// TLS listeners carry TLSRoutes (GEP-2643, TLSRoute v1 in v1.6.1): tls.mode Passthrough (no certificates: the proxy
// routes the connection by its SNI without terminating) or Terminate (certificateRefs resolved as for HTTPS). Two TLS
// listeners on one port with different modes conflict (ProtocolConflict, Accepted False: mixed termination is not
// supported, conformance TLSRouteListenerMixedTerminationNotSupported).
import { createPrivateKey, type KeyObject, X509Certificate } from 'node:crypto';
import { GATEWAY_GROUP, type Gateway, type Listener, type ReferenceGrant, type Secret } from '../model.ts';
import { missingGrantMessage, referenceAllowed } from './refgrant.ts';
import { bad, type CertificateIR, type Outcome, ok, type TlsChainIR } from './types.ts';

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
  /** Where the listener is written: the Gateway itself, or a ListenerSet attached to it (GEP-1713). */
  owner: ListenerOwner;
  /** Unique per Gateway: the listener's name on the Gateway, `<ns>/<listenerset>/<name>` on a ListenerSet. */
  id: string;
  report: ListenerReport;
  /** Accepted, without conflicts, admitting a route kind: it serves traffic. */
  usable: boolean;
  /** It admits a route kind of its protocol. */
  kindsOk: boolean;
  /** Accepted, without conflicts, admitting a route kind, its references resolved (served or not). */
  valid: boolean;
  /**
   * Routes attach to it and count in its attachedRoutes: accepted, without conflicts, admitting a route kind, even
   * with unresolved references or not served (conformance GatewayWithAttachedRoutes, GatewayModifyListeners).
   */
  attachable: boolean;
  /**
   * HTTPS and TLS Terminate: the certificates of its certificateRefs, in order, once they all resolve (base64 PEM, as
   * in the Secret).
   */
  certificates?: CertificateIR[];
  /** HTTPS: the client certificate validation of the Gateway's spec.tls.frontend for its port (frontend-tls.ts). */
  clientValidation?: TlsChainIR['clientValidation'];
}

/** What listeners' certificateRefs are resolved against. */
export interface ListenerRefs {
  grants: (namespace: string) => ReferenceGrant[];
  secret: (namespace: string, name: string) => Secret | undefined;
}

const NO_REFS: ListenerRefs = { grants: () => [], secret: () => undefined };

export interface ListenerOwner {
  kind: 'Gateway' | 'ListenerSet';
  namespace: string;
  name: string;
}

/**
 * The route kinds each supported listener protocol carries, in the order status.supportedKinds lists them: HTTP and
 * HTTPS carry GRPCRoute too (gRPC over h2c and over TLS with ALPN h2), as Envoy Gateway's listeners report.
 */
const ROUTE_KINDS_OF: Record<string, string[]> = {
  HTTP: ['HTTPRoute', 'GRPCRoute'],
  HTTPS: ['HTTPRoute', 'GRPCRoute'],
  TLS: ['TLSRoute'],
  TCP: ['TCPRoute'],
  UDP: ['UDPRoute'],
};

/** The route kinds a listener protocol carries (none for a protocol the control plane does not serve). */
export const routeKindsOf = (protocol: string): readonly string[] => ROUTE_KINDS_OF[protocol] ?? [];

/** UDP listeners take their own port space; HTTP and TCP share the TCP one. */
export const transportOf = (protocol: string) => (protocol === 'UDP' ? 'udp' : 'tcp');

/**
 * Every listener of the Gateway, in spec order, with its report; then, when given, the listeners of the ListenerSets
 * attached to it, in their precedence order (oldest, then namespace/name). A ListenerSet's listener that conflicts
 * with one before it (the Gateway's own first) is the one marked conflicted (GEP-1713's precedence).
 */
export function validateListeners(
  gw: Gateway,
  sets: { owner: ListenerOwner; listeners: Listener[] }[] = [],
  refs: ListenerRefs = NO_REFS,
): ListenerState[] {
  const own: ListenerOwner = { kind: 'Gateway', namespace: gw.metadata.namespace ?? 'default', name: gw.metadata.name };
  const states = (gw.spec?.listeners ?? []).map((l) => validateListener(l, own, l.name, refs));
  markConflicts(states);
  for (const set of sets) {
    const added = set.listeners.map((l) =>
      validateListener(l, set.owner, `${set.owner.namespace}/${set.owner.name}/${l.name}`, refs),
    );
    // Against everything before it: the Gateway's, earlier sets', and this set's earlier listeners.
    for (const s of added) {
      markConflictWithEarlier(s, states, `${own.namespace}/${own.name}`);
      states.push(s);
    }
  }
  for (const s of states) {
    s.attachable = s.report.accepted.ok && s.report.conflicted.ok && s.kindsOk;
    s.valid = s.attachable && s.report.resolvedRefs.ok;
    // Conflicted is reported True when there IS a conflict: outcome.ok false means "conflicted".
    if (!s.report.conflicted.ok) s.usable = false;
    // A listener that admits no route kind serves nothing: it is not programmed (and gets no Envoy listener).
    if (!s.kindsOk) s.usable = false;
    if (!s.usable) {
      s.report.programmed = bad(
        !s.report.conflicted.ok && s.owner.kind === 'ListenerSet' ? s.report.conflicted.reason : 'Invalid',
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
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey(Buffer.from(key, 'base64'));
  } catch (err) {
    return `tls.key is not a PEM private key (${(err as Error).message})`;
  }
  // A key that is not the certificate's: Envoy refuses the pair ("Failed to load private key"), so it is not sent.
  // An expired certificate, or one whose issuer is not in tls.crt, is well-formed: Envoy loads and serves it (clients
  // refuse it), and the spec's InvalidCertificateRef is for refs that are nonexistent, unsupported or malformed.
  if (!new X509Certificate(Buffer.from(crt, 'base64')).checkPrivateKey(privateKey))
    return 'tls.key does not match the certificate in tls.crt';
  return undefined;
}

/**
 * One reference to a certificate Secret (a listener's certificateRef, a Gateway's backend clientCertificateRef): a
 * core Secret in the referrer's namespace or granted by a ReferenceGrant, that exists and holds a certificate and
 * key; else the outcome naming why (`invalidReason`, or RefNotPermitted).
 */
export function resolveCertificateRef(
  ref: { group?: string; kind?: string; name: string; namespace?: string },
  from: { group: string; kind: string; namespace: string },
  where: string,
  refs: ListenerRefs,
  invalidReason: string,
): { certificate: CertificateIR } | { problem: Outcome } {
  const group = ref.group ?? '';
  const kind = ref.kind ?? 'Secret';
  if (group !== '' || kind !== 'Secret') {
    return { problem: bad(invalidReason, `${where}: ${group || 'core'}/${kind} is not supported (only core Secrets)`) };
  }
  const to = { group: '', kind: 'Secret', namespace: ref.namespace ?? from.namespace, name: ref.name };
  if (!referenceAllowed(refs.grants(to.namespace), from, to)) {
    return { problem: bad('RefNotPermitted', `${where}: ${missingGrantMessage(from, to)}`) };
  }
  const secret = refs.secret(to.namespace, to.name);
  if (!secret) return { problem: bad(invalidReason, `${where}: Secret ${to.namespace}/${to.name} does not exist`) };
  const problem = certificateProblem(secret);
  if (problem) return { problem: bad(invalidReason, `${where}: Secret ${to.namespace}/${to.name} ${problem}`) };
  return {
    certificate: {
      secret: `${to.namespace}/${to.name}`,
      certificateChain: secret.data!['tls.crt']!,
      privateKey: secret.data!['tls.key']!,
    },
  };
}

/**
 * An HTTPS listener's certificateRefs: core Secrets, in the owner's namespace or granted by a ReferenceGrant, that
 * exist and hold a certificate and key.
 */
function certificateRefsOutcome(
  l: Listener,
  owner: ListenerOwner,
  refs: ListenerRefs,
  certificates: CertificateIR[],
): Outcome {
  if (l.protocol === 'HTTPS' && (l.tls?.mode ?? 'Terminate') !== 'Terminate') {
    return bad('InvalidCertificateRef', `listener ${l.name}: tls.mode ${l.tls?.mode} is not supported on HTTPS`);
  }
  if (!l.tls?.certificateRefs?.length) {
    return bad('InvalidCertificateRef', `listener ${l.name}: tls.certificateRefs is required for tls.mode Terminate`);
  }
  for (const [i, ref] of (l.tls?.certificateRefs ?? []).entries()) {
    const from = { group: GATEWAY_GROUP, kind: owner.kind, namespace: owner.namespace };
    const r = resolveCertificateRef(
      ref,
      from,
      `listener ${l.name}: tls.certificateRefs[${i}]`,
      refs,
      'InvalidCertificateRef',
    );
    if ('problem' in r) return r.problem;
    certificates.push(r.certificate);
  }
  return ok('ResolvedRefs', 'references resolved');
}

/** One listener on its own: protocol, route kinds, certificate references. */
function validateListener(l: Listener, owner: ListenerOwner, id: string, refs: ListenerRefs): ListenerState {
  const routeKinds = routeKindsOf(l.protocol);
  const kind = routeKinds.length > 0;
  let supportedKinds = routeKinds.map((k) => ({ group: GATEWAY_GROUP, kind: k }));
  let resolvedRefs = ok('ResolvedRefs', 'route kinds resolved');
  let kindsOk = kind;
  const kinds = l.allowedRoutes?.kinds;
  if (kind && kinds?.length) {
    const isValid = (k: { group?: string; kind: string }) =>
      (k.group ?? GATEWAY_GROUP) === GATEWAY_GROUP && routeKinds.includes(k.kind);
    const invalid = kinds.filter((k) => !isValid(k));
    supportedKinds = supportedKinds.filter((s) => kinds.some((k) => isValid(k) && k.kind === s.kind));
    kindsOk = supportedKinds.length > 0;
    if (invalid.length) {
      resolvedRefs = bad(
        'InvalidRouteKinds',
        `unsupported route kinds: ${invalid.map((k) => `${k.group ?? GATEWAY_GROUP}/${k.kind}`).join(', ')} (supported: ${routeKinds.join(', ')})`,
      );
    }
  }
  // HTTPS, and TLS in mode Terminate (the default mode), resolve certificates; TLS Passthrough has none to resolve.
  const https = l.protocol === 'HTTPS' || (l.protocol === 'TLS' && tlsMode(l) === 'Terminate');
  const certificates: CertificateIR[] = [];
  if (https && resolvedRefs.ok) resolvedRefs = certificateRefsOutcome(l, owner, refs, certificates);
  const accepted = kind
    ? ok('Accepted', 'listener accepted')
    : bad('UnsupportedProtocol', `protocol ${l.protocol} is not supported (supported: HTTP, HTTPS, TLS, TCP, UDP)`);
  return {
    l,
    owner,
    id,
    kindsOk,
    valid: false,
    attachable: false,
    usable: kind && (!https || resolvedRefs.ok),
    ...(https && resolvedRefs.ok ? { certificates } : {}),
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

/** A TLS listener's mode: Terminate unless it says Passthrough (the API's default). */
export const tlsMode = (l: Listener): 'Terminate' | 'Passthrough' =>
  l.tls?.mode === 'Passthrough' ? 'Passthrough' : 'Terminate';

/** Two TLS listeners on one port with different modes (mixed termination: not supported). */
function mixedTls(a: Listener, b: Listener): boolean {
  return a.protocol === 'TLS' && b.protocol === 'TLS' && tlsMode(a) !== tlsMode(b);
}

/**
 * The listener a ListenerSet's listener conflicts with, as its status may name it. GEP-1713 ("Conflict Between Two
 * ListenerSets"): "The controller should avoid setting any condition that exposes information from other users, but
 * still provide meaningful information": a listener of the parent Gateway or of a set in the same namespace is named;
 * one of a set in another namespace is not (the GEP's example message: "ListenerSet has conflicts with other listeners
 * attached to the same Gateway").
 */
function conflictingListener(o: ListenerState, s: ListenerState, gatewayKey: string): string {
  if (o.owner.kind === 'Gateway') return `listener ${o.l.name} of Gateway ${gatewayKey}`;
  if (o.owner.namespace !== s.owner.namespace) return `another listener attached to Gateway ${gatewayKey}`;
  if (o.owner.name === s.owner.name) return `listener ${o.l.name} of this ListenerSet`;
  return `listener ${o.l.name} of ListenerSet ${o.owner.namespace}/${o.owner.name}`;
}

/** A ListenerSet's listener against the listeners before it: the first conflict found marks it (not them). */
function markConflictWithEarlier(s: ListenerState, earlier: ListenerState[], gatewayKey: string): void {
  const t = transportOf(s.l.protocol);
  for (const o of earlier) {
    if (!o.report.accepted.ok || !o.report.conflicted.ok || o.l.port !== s.l.port || transportOf(o.l.protocol) !== t)
      continue;
    const where = conflictingListener(o, s, gatewayKey);
    if (o.l.protocol !== s.l.protocol || mixedTls(o.l, s.l)) {
      s.report.conflicted = bad(
        'ProtocolConflict',
        `port ${s.l.port} is used by ${where} with protocol ${o.l.protocol}${mixedTls(o.l, s.l) ? ` (tls.mode ${tlsMode(o.l)})` : ''}`,
      );
    } else if ((o.l.hostname ?? '') === (s.l.hostname ?? '')) {
      s.report.conflicted = bad(
        'HostnameConflict',
        `port ${s.l.port} and hostname ${s.l.hostname || '(any)'} are used by ${where}`,
      );
    } else continue;
    // As upstream's listenerset-hostname-conflict conformance test expects: not accepted, not programmed.
    s.report.accepted = bad(s.report.conflicted.reason, s.report.conflicted.message);
    return;
  }
}

/** Listeners sharing a port must agree on the protocol and differ in hostname. */
function markConflicts(states: ListenerState[]): void {
  const byPort = new Map<string, ListenerState[]>();
  for (const s of states) {
    const k = `${transportOf(s.l.protocol)}/${s.l.port}`;
    byPort.set(k, [...(byPort.get(k) ?? []), s]);
  }
  for (const group of byPort.values()) {
    if (group.length < 2) continue;
    const protocols = new Set(group.map((s) => s.l.protocol));
    const modes = new Set(group.filter((s) => s.l.protocol === 'TLS').map((s) => tlsMode(s.l)));
    for (const s of group) {
      if (protocols.size > 1) {
        s.report.conflicted = bad(
          'ProtocolConflict',
          `port ${s.l.port} is used with protocols ${[...protocols].join(', ')}`,
        );
        continue;
      }
      if (modes.size > 1) {
        // Mixed Terminate/Passthrough on one port: "MUST have Accepted=False with Reason=ProtocolConflict"
        // (conformance TLSRouteListenerMixedTerminationNotSupported).
        s.report.conflicted = bad(
          'ProtocolConflict',
          `port ${s.l.port} has TLS listeners with both tls.mode Terminate and Passthrough (mixed termination is not supported)`,
        );
        s.report.accepted = bad('ProtocolConflict', s.report.conflicted.message);
        // Not accepted: it carries no route kind (the test expects supportedKinds empty).
        s.report.supportedKinds = [];
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
