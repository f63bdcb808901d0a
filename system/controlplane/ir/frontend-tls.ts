// GEP-91 client certificate validation of a Gateway's HTTPS listeners (Gateway API v1.6.1 apis/v1/gateway_types.go
// FrontendTLSConfig, FrontendTLSValidation; conformance GatewayFrontendClientCertificateValidation,
// -InsecureFallback, GatewayInvalidFrontendClientCertificateValidation, GatewayFrontendInvalidDefault...): the
// Gateway's `spec.tls.frontend.perPort` entry for a listener's port, else `spec.tls.frontend.default`, applies to every
// HTTPS listener on that port (HTTP listeners are not touched). Its caCertificateRefs resolve to the CA certificates a
// client certificate must chain to: a core ConfigMap or Secret (`ca.crt`; the spec's Core support is the ConfigMap,
// Secrets are implementation-specific as in Envoy Gateway), in the Gateway's namespace or granted by a ReferenceGrant.
// A listener whose reference does not resolve reports ResolvedRefs=False with the spec's reason (InvalidCACertificateRef
// for a missing object or no usable `ca.crt`, InvalidCACertificateKind for another kind, RefNotPermitted without a
// grant) naming the reference; when none resolves, Accepted=False/NoValidCACertificate and the listener is not
// programmed nor served. mode AllowInsecureFallback on any of them sets the Gateway's
// InsecureFrontendValidationMode=True/ConfigurationChanged condition.
import { type FrontendTlsValidation, GATEWAY_GROUP, type Gateway } from '../model.ts';
import { parseCaBundle } from './backend-tls.ts';
import type { ListenerRefs, ListenerState } from './listeners.ts';
import { missingGrantMessage, referenceAllowed } from './refgrant.ts';
import { bad, type Outcome } from './types.ts';

/** What CA references are resolved against (the listeners' ReferenceGrants and Secrets, and ConfigMaps). */
export interface FrontendRefs extends ListenerRefs {
  configMap: (namespace: string, name: string) => { data?: Record<string, string> } | undefined;
}

/** The validation that applies to HTTPS listeners on `port`, and the field it is written in (explain reads it too). */
export function validationFor(gw: Gateway, port: number): { v: FrontendTlsValidation; field: string } | undefined {
  const f = gw.spec?.tls?.frontend;
  const i = (f?.perPort ?? []).findIndex((p) => p.port === port);
  if (i >= 0) {
    const v = f!.perPort![i].tls?.validation;
    return v ? { v, field: `spec.tls.frontend.perPort[${i}].tls.validation` } : undefined;
  }
  return f?.default?.validation
    ? { v: f.default.validation, field: 'spec.tls.frontend.default.validation' }
    : undefined;
}

/** The CA bundle of one validation's references, and the problem of each that does not resolve. */
function resolveCaRefs(
  gw: Gateway,
  v: FrontendTlsValidation,
  field: string,
  refs: FrontendRefs,
): { pems: string[]; problems: Outcome[] } {
  const ns = gw.metadata.namespace ?? 'default';
  const from = { group: GATEWAY_GROUP, kind: 'Gateway', namespace: ns };
  const pems: string[] = [];
  const problems: Outcome[] = [];
  (v.caCertificateRefs ?? []).forEach((r, i) => {
    const where = `${field}.caCertificateRefs[${i}]`;
    const group = r.group ?? '';
    const kind = r.kind ?? '';
    if (group !== '' || (kind !== 'ConfigMap' && kind !== 'Secret')) {
      problems.push(
        bad(
          'InvalidCACertificateKind',
          `${where}: ${group ? `${group}/` : ''}${kind} ${r.name} is not supported (core ConfigMap or Secret)`,
        ),
      );
      return;
    }
    const to = { group: '', kind, namespace: r.namespace ?? ns, name: r.name };
    if (!referenceAllowed(refs.grants(to.namespace), from, to)) {
      problems.push(bad('RefNotPermitted', `${where}: ${missingGrantMessage(from, to)}`));
      return;
    }
    let pem: string | undefined;
    let exists = true;
    if (kind === 'ConfigMap') {
      const cm = refs.configMap(to.namespace, to.name);
      exists = !!cm;
      pem = cm?.data?.['ca.crt'];
    } else {
      const secret = refs.secret(to.namespace, to.name);
      exists = !!secret;
      const b64 = secret?.data?.['ca.crt'];
      pem = b64 ? Buffer.from(b64, 'base64').toString() : undefined;
    }
    const parsed = exists ? parseCaBundle(pem) : { error: 'does not exist' };
    if ('error' in parsed) {
      problems.push(bad('InvalidCACertificateRef', `${where}: ${kind} ${to.namespace}/${to.name} ${parsed.error}`));
    } else pems.push(parsed.pem);
  });
  return { pems, problems };
}

/**
 * Applies the Gateway's frontend validation to its HTTPS listeners (their reports, whether they are served, and the
 * `clientValidation` their TLS chain gets); returns the message of the Gateway's InsecureFrontendValidationMode
 * condition when some validation in use allows the insecure fallback.
 */
export function applyFrontendValidation(
  gw: Gateway,
  listeners: ListenerState[],
  refs: FrontendRefs,
): { insecure?: string } {
  const insecure = new Set<string>();
  for (const s of listeners) {
    if (s.l.protocol !== 'HTTPS' || !s.report.accepted.ok) continue;
    const found = validationFor(gw, s.l.port);
    if (!found) continue;
    const { pems, problems } = resolveCaRefs(gw, found.v, found.field, refs);
    if (problems.length && s.report.resolvedRefs.ok) {
      s.report.resolvedRefs = bad(problems[0].reason, problems.map((p) => p.message).join('; '));
    }
    if (!pems.length) {
      const why = problems.length ? problems.map((p) => p.message).join('; ') : `${found.field}: no caCertificateRefs`;
      s.report.accepted = bad('NoValidCACertificate', `no valid CA certificate: ${why}`);
      s.report.programmed = bad('Invalid', s.report.accepted.message);
      s.usable = false;
      s.valid = false;
      s.attachable = false;
      s.clientValidation = undefined;
      continue;
    }
    const mode = found.v.mode === 'AllowInsecureFallback' ? 'AllowInsecureFallback' : 'AllowValidOnly';
    if (mode === 'AllowInsecureFallback') insecure.add(found.field);
    s.clientValidation = { trustedCa: pems.join(''), mode };
  }
  if (!insecure.size) return {};
  return {
    insecure: `client certificates are not required (mode AllowInsecureFallback in ${[...insecure].join(', ')})`,
  };
}
