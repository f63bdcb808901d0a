// A Gateway's listeners seen by explain (issue 12 item 6): what the control plane decided about each one, rendered
// from the listener's own status conditions (system/controlplane/ir/listeners.ts writes them), not re-derived: a
// certificate that does not resolve (ResolvedRefs=False: InvalidCertificateRef for a missing or malformed Secret,
// RefNotPermitted for a Secret in another namespace no ReferenceGrant allows), a listener not Accepted or not
// Programmed. For RefNotPermitted the finding carries the ReferenceGrant that allows the certificateRefs, as YAML
// ready for `kubectl apply -f -` (the grant the control plane's own referenceAllowed() misses, as for rule 3). The
// client CA references of the Gateway's spec.tls.frontend (GEP-91; the control plane's validationFor() picks the
// port's) are told apart: "client CA certificates not resolved", their ConfigMaps/Secrets and grant.
import { validationFor } from '../../../system/controlplane/ir/frontend-tls.ts';
import { referenceAllowed } from '../../../system/controlplane/ir/refgrant.ts';
import type { Gateway, ReferenceGrant } from '../../../system/controlplane/model.ts';
import type { Condition, KObj } from '../../toolkit/kube.ts';
import { referenceGrantYaml } from './refgrant-yaml.ts';
import { cond, condText, type Finding, GW_GROUP, subjectOf } from './report.ts';
import type { GatewayKey, World } from './world.ts';

const TLS_PROTOCOLS = new Set(['HTTPS', 'TLS']);

/** Findings for each listener of a Gateway (or only `only`, a problem when it has none such with `missingIsProblem`). */
export function listenerFindings(
  world: World,
  gw: KObj,
  g: GatewayKey,
  only?: string,
  missingIsProblem = false,
): Finding[] {
  const subject = subjectOf('Gateway', g);
  const out: Finding[] = [];
  const statuses: { name: string; conditions?: Condition[] }[] = gw.status?.listeners ?? [];
  let found = false;
  for (const l of (gw.spec?.listeners ?? []) as any[]) {
    if (only !== undefined && l.name !== only) continue;
    found = true;
    const st = statuses.find((s) => s.name === l.name);
    const label = `listener ${l.name} (${l.protocol} port ${l.port}${l.hostname ? ` ${l.hostname}` : ''})`;
    if (!st) {
      out.push({ level: 'note', subject, message: `${label}: no status from gwvendor yet` });
      continue;
    }
    const resolved = cond(st.conditions, 'ResolvedRefs');
    const accepted = cond(st.conditions, 'Accepted');
    const programmed = cond(st.conditions, 'Programmed');
    const tls = TLS_PROTOCOLS.has(l.protocol);
    if (resolved?.status === 'False') {
      const ca = (resolved.message ?? '').startsWith('spec.tls.frontend');
      const cert = !ca && (resolved.reason === 'InvalidCertificateRef' || resolved.reason === 'RefNotPermitted');
      const refs = ca ? clientCaRefs(gw, l, g.namespace) : certificateRefs(l, g.namespace);
      const what = ca
        ? 'client CA certificates not resolved'
        : cert
          ? 'certificate not resolved'
          : 'references not resolved';
      out.push({
        level: 'problem',
        subject,
        message: `${label}: ${what}: ${condText(resolved)}: ${resolved.message ?? ''}`.trim(),
        details: cert
          ? [
              `the listener is not programmed: a TLS client of port ${l.port} asking for it gets no certificate (handshake fails)`,
              ...refs.map((r) => `kubectl -n ${r.namespace} get secret ${r.name}`),
            ]
          : ca
            ? [
                `with no CA resolved the listener is not accepted (NoValidCACertificate): port ${l.port} is not served`,
                ...refs.map((r) => `kubectl -n ${r.namespace} get ${r.kind.toLowerCase()} ${r.name}`),
              ]
            : undefined,
        ...(resolved.reason === 'RefNotPermitted' ? grantFix(world, refs, g) : {}),
      });
    }
    if (accepted?.status === 'False') {
      out.push({
        level: 'problem',
        subject,
        message: `${label}: ${condText(accepted)}: ${accepted.message ?? ''}`.trim(),
      });
    }
    if (programmed?.status === 'False' && resolved?.status !== 'False') {
      out.push({
        level: 'problem',
        subject,
        message: `${label}: ${condText(programmed)}: ${programmed.message ?? ''}`.trim(),
      });
    }
    if (tls && resolved?.status === 'True' && programmed?.status === 'True') {
      const refs = certificateRefs(l, g.namespace).map((r) => `Secret ${r.namespace}/${r.name}`);
      out.push({ level: 'ok', subject, message: `${label}: certificates resolved (${refs.join(', ') || 'none'})` });
    }
  }
  if (only !== undefined && !found && missingIsProblem) {
    const names = ((gw.spec?.listeners ?? []) as any[]).map((l) => l.name).join(', ');
    out.push({
      level: 'problem',
      subject,
      message: `Gateway ${g.namespace}/${g.name} has no listener ${only} (listeners: ${names})`,
    });
  }
  return out;
}

/** A listener's reference to a Secret or ConfigMap, its defaults filled in. */
type ObjectRef = { namespace: string; name: string; group: string; kind: string };

/** A Gateway API SecretObjectReference / ObjectReference with its defaults: the listener's namespace, the core group. */
function withDefaults(
  r: { namespace?: string; name: string; group?: string; kind?: string },
  ns: string,
  kind: string,
): ObjectRef {
  return { namespace: r.namespace ?? ns, name: r.name, group: r.group ?? '', kind: r.kind ?? kind };
}

function certificateRefs(l: any, ns: string): ObjectRef[] {
  return ((l.tls?.certificateRefs ?? []) as any[]).map((r) => withDefaults(r, ns, 'Secret'));
}

/** The client CA references of the Gateway's spec.tls.frontend that apply to an HTTPS listener's port. */
function clientCaRefs(gw: KObj, l: any, ns: string): ObjectRef[] {
  if (l.protocol !== 'HTTPS') return [];
  return (validationFor(gw as unknown as Gateway, l.port)?.v.caCertificateRefs ?? []).map((r) =>
    withDefaults(r, ns, ''),
  );
}

/** The ReferenceGrants that would allow a listener's cross-namespace references, by the control plane's rule. */
function grantFix(world: World, refs: ObjectRef[], g: GatewayKey): Pick<Finding, 'yaml'> {
  const grants = world.grants as unknown as ReferenceGrant[];
  const from = { group: GW_GROUP, kind: 'Gateway', namespace: g.namespace };
  const docs: string[] = [];
  for (const to of refs) {
    if (to.namespace === g.namespace || referenceAllowed(grants, from, to)) continue;
    const yaml = referenceGrantYaml(from, to);
    if (!docs.includes(yaml)) docs.push(yaml);
  }
  return docs.length ? { yaml: docs.join('---\n') } : {};
}
