// BackendTLSPolicy (Gateway API v1.6.1 v1, GEP-1897; apis/v1/backendtlspolicy_types.go): each policy resolved on its
// own (its CA certificates from ConfigMaps' `ca.crt`, or the system's well-known CAs; the SNI hostname; the subject
// alt names) into the TLS a cluster's proxy speaks to the Service's endpoints, with the conditions the spec gives:
// Accepted (False/NoValidCACertificate when every caCertificateRef is invalid, False/Invalid for an unknown
// wellKnownCACertificates) and ResolvedRefs (False/InvalidKind for a ref that is not a core ConfigMap, False/
// InvalidCACertificateRef for a missing ConfigMap, no `ca.crt` or no parsable certificate in it). Then, per Gateway,
// which policy applies to a cluster (a Service port): one whose targetRef's sectionName names the port, else one
// without sectionName; among those for the same target the oldest wins (creationTimestamp, then namespace/name) and
// the others are Accepted=False/Conflicted (GEP-713, conformance BackendTLSPolicyConflictResolution). The policy's
// ancestors are the Gateways whose routes send to a Service it targets.
import { X509Certificate } from 'node:crypto';
import { type BackendTLSPolicy, type ConfigMap, olderFirst, type Service } from '../model.ts';
import { clusterPortName, type ServiceTarget, serviceTargets } from './service-targets.ts';
import {
  bad,
  type CertificateIR,
  type ClusterIR,
  compareStrings,
  type ObjRef,
  type Outcome,
  ok,
  type UpstreamTlsIR,
} from './types.ts';

/** The CA bundle a `wellKnownCACertificates: System` policy trusts (Envoy Gateway's choice too). */
export const SYSTEM_CA_FILE = '/etc/ssl/certs/ca-certificates.crt';

export interface BackendTlsInfo {
  ref: ObjRef;
  generation: number;
  /** For the oldest-wins rule. */
  metadata: BackendTLSPolicy['metadata'];
  targets: ServiceTarget[];
  accepted: Outcome;
  resolvedRefs: Outcome;
  /** What a cluster it applies to speaks (absent when not accepted: the cluster then has no endpoints). */
  tls?: UpstreamTlsIR;
}

export interface BackendTlsWorld {
  configMap(namespace: string, name: string): ConfigMap | undefined;
}

/** The certificates of a PEM bundle, or why it has none. */
export function parseCaBundle(pem: string | undefined): { pem: string } | { error: string } {
  if (!pem?.trim()) return { error: 'has no ca.crt' };
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  if (!blocks.length) return { error: 'ca.crt holds no PEM certificate' };
  for (const b of blocks) {
    try {
      new X509Certificate(b);
    } catch (e) {
      return { error: `ca.crt does not parse as a certificate: ${(e as Error).message}` };
    }
  }
  return { pem: `${blocks.join('\n')}\n` };
}

export function buildBackendTlsInfo(p: BackendTLSPolicy, world: BackendTlsWorld): BackendTlsInfo {
  const ns = p.metadata.namespace ?? 'default';
  const ref: ObjRef = { kind: 'BackendTLSPolicy', namespace: ns, name: p.metadata.name };
  const v = p.spec?.validation;
  const targets = serviceTargets(p);
  const base = { ref, generation: p.metadata.generation ?? 1, metadata: p.metadata, targets };
  const resolvedOk = ok('ResolvedRefs', 'all references resolved');
  if (!v?.hostname) {
    return { ...base, accepted: bad('Invalid', 'spec.validation.hostname is required'), resolvedRefs: resolvedOk };
  }
  const sans = (v.subjectAltNames ?? []).map((s) =>
    s.type === 'URI' ? { type: 'URI' as const, value: s.uri ?? '' } : { type: 'DNS' as const, value: s.hostname ?? '' },
  );
  const refs = v.caCertificateRefs ?? [];
  if (!refs.length) {
    if (v.wellKnownCACertificates !== 'System') {
      const what = v.wellKnownCACertificates
        ? `spec.validation.wellKnownCACertificates: ${v.wellKnownCACertificates} is not supported (System)`
        : 'spec.validation: set caCertificateRefs or wellKnownCACertificates: System';
      return { ...base, accepted: bad('Invalid', what), resolvedRefs: resolvedOk };
    }
    const tls: UpstreamTlsIR = { policy: `${ns}/${p.metadata.name}`, sni: v.hostname, systemCa: true, sans };
    return { ...base, accepted: ok('Accepted', 'policy accepted'), resolvedRefs: resolvedOk, tls };
  }
  const pems: string[] = [];
  const problems: { reason: string; message: string }[] = [];
  refs.forEach((r, i) => {
    const field = `spec.validation.caCertificateRefs[${i}]`;
    if ((r.group ?? '') !== '' || r.kind !== 'ConfigMap') {
      problems.push({
        reason: 'InvalidKind',
        message: `${field}: ${r.group ? `${r.group}/` : ''}${r.kind} ${r.name} is not supported (kind ConfigMap, group "")`,
      });
      return;
    }
    const cm = world.configMap(ns, r.name);
    const parsed = cm ? parseCaBundle(cm.data?.['ca.crt']) : { error: 'not found' };
    if ('error' in parsed) {
      problems.push({
        reason: 'InvalidCACertificateRef',
        message: `${field}: ConfigMap ${ns}/${r.name} ${parsed.error}`,
      });
    } else pems.push(parsed.pem);
  });
  const resolvedRefs = problems.length
    ? bad(problems[0].reason, problems.map((x) => x.message).join('; '))
    : resolvedOk;
  if (!pems.length) {
    return {
      ...base,
      accepted: bad('NoValidCACertificate', `no valid CA certificate: ${resolvedRefs.message}`),
      resolvedRefs,
    };
  }
  const tls: UpstreamTlsIR = { policy: `${ns}/${p.metadata.name}`, sni: v.hostname, trustedCa: pems.join(''), sans };
  return { ...base, accepted: ok('Accepted', 'policy accepted'), resolvedRefs, tls };
}

export interface BackendTlsReport {
  generation: number;
  accepted: Outcome;
  resolvedRefs: Outcome;
}

/**
 * The BackendTLSPolicies applied to a Gateway's clusters (copies with ClusterIR.tls set: the clusters of a route are
 * shared by the Gateways it attaches to) and every policy met reported: per cluster, the winning policy of its port's
 * section, else of the whole Service; the losers of the same target Conflicted.
 */
export function applyBackendTls(
  clusters: ClusterIR[],
  policiesFor: (namespace: string, service: string) => BackendTlsInfo[],
  service: (namespace: string, name: string) => Service | undefined,
  clientCertificate?: CertificateIR,
): { clusters: ClusterIR[]; reports: Record<string, BackendTlsReport> } {
  const reports: Record<string, BackendTlsReport> = {};
  const conflicted = new Map<string, string>();
  const keyOfInfo = (p: BackendTlsInfo) => `${p.ref.namespace}/${p.ref.name}`;
  const out = clusters.map((c) => {
    if (c.members) return c;
    const policies = policiesFor(c.namespace, c.service);
    if (!policies.length) return c;
    const portName = clusterPortName(c, service);
    const bySection = new Map<string, BackendTlsInfo[]>();
    for (const p of policies) {
      for (const t of p.targets) {
        if (t.namespace !== c.namespace || t.service !== c.service) continue;
        const list = bySection.get(t.sectionName ?? '') ?? [];
        if (!list.includes(p)) list.push(p);
        bySection.set(t.sectionName ?? '', list);
      }
    }
    for (const list of bySection.values()) {
      list.sort((a, b) => olderFirst(a, b));
      for (const loser of list.slice(1)) conflicted.set(keyOfInfo(loser), keyOfInfo(list[0]));
    }
    const winner = (portName ? bySection.get(portName)?.[0] : undefined) ?? bySection.get('')?.[0];
    for (const list of bySection.values()) for (const p of list) reports[keyOfInfo(p)] ??= reportOf(p);
    if (!winner) return c;
    // An accepted policy's TLS; an invalid one leaves the cluster without endpoints, so requests get a 5xx
    // (GEP-1897: "the request MUST fail ... HTTP 5xx") rather than plaintext or unverified TLS.
    if (!winner.tls)
      return { ...c, tls: { policy: keyOfInfo(winner), sni: '', sans: [], invalid: winner.accepted.message } };
    return { ...c, tls: clientCertificate ? { ...winner.tls, clientCertificate } : winner.tls };
  });
  for (const [loser, winner] of conflicted) {
    const r = reports[loser];
    if (r?.accepted.ok)
      r.accepted = bad('Conflicted', `conflicts with the older BackendTLSPolicy ${winner} for the same target`);
  }
  return {
    clusters: out,
    reports: Object.fromEntries(Object.entries(reports).sort(([a], [b]) => compareStrings(a, b))),
  };
}

function reportOf(p: BackendTlsInfo): BackendTlsReport {
  return { generation: p.generation, accepted: p.accepted, resolvedRefs: p.resolvedRefs };
}
