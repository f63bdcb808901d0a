// `explain backendconfigpolicy/<name>`: what a BackendConfigPolicy came to, from the control plane's own decision
// (its status: Accepted — with the settings dropped because the proxy cannot honour them — and Attached/Overridden
// per ancestor Gateway; never re-derived here) and from each ancestor's proxies: the clusters whose
// `filter_metadata["merge.BackendConfigPolicy.gateway.gwvendor.dev"]` names it (the settings applied), and their
// hosts' health flags in `/clusters` as Envoy prints them — `/failed_active_hc` (the active health check got no
// expected status), `/failed_outlier_check` (ejected after consecutive 5xx) — with what a request then gets (503 UH
// when no host is healthy and the panic threshold does not apply). Pure: world.ts gathers.
import type { KObj } from '../../toolkit/kube.ts';
import { type Finding, find, subjectOf, type Target } from './report.ts';
import type { GatewayKey, World } from './world.ts';

export const CLUSTER_PROVENANCE_KEY = 'merge.BackendConfigPolicy.gateway.gwvendor.dev';

const FLAG_CAUSES: Record<string, string> = {
  '/failed_active_hc':
    'its active health check did not get an expected status (healthCheck.http.path / expectedStatuses)',
  '/failed_outlier_check': 'outlier detection ejected it after consecutive 5xx (outlierDetection)',
  '/active_hc_timeout': 'its active health check timed out (healthCheck.timeout)',
  '/pending_active_hc': 'not health checked yet',
  '/failed_eds_health': 'its endpoint is not ready',
};

/** The Gateways the control plane reports the policy on (its status ancestors). */
export function backendConfigGateways(p: KObj | undefined): GatewayKey[] {
  return ((p?.status?.ancestors ?? []) as any[])
    .map((a) => a.ancestorRef)
    .filter((r) => r?.kind === 'Gateway')
    .map((r) => ({ namespace: r.namespace, name: r.name }));
}

/** Clusters of a config_dump whose provenance names `policy` (`BackendConfigPolicy/<ns>/<name>`): name → settings. */
function clustersNaming(dump: { configs?: any[] } | undefined, policy: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const c of dump?.configs ?? []) {
    for (const d of [...(c.dynamic_active_clusters ?? []), ...(c.static_clusters ?? [])]) {
      const prov = d.cluster?.metadata?.filter_metadata?.[CLUSTER_PROVENANCE_KEY] ?? {};
      const settings = Object.entries<string>(prov)
        .filter(([, v]) => v === policy)
        .map(([k]) => k);
      if (settings.length) out.set(d.cluster.name, settings);
    }
  }
  return out;
}

/** `/clusters` text → cluster → host → health flags. */
function hostFlags(text: string | undefined): Map<string, Map<string, string>> {
  const out = new Map<string, Map<string, string>>();
  for (const line of (text ?? '').split('\n')) {
    const m = /^([^:]+)::([^:]+:\d+|\[[^\]]+\]:\d+)::health_flags::(.*)$/.exec(line);
    if (!m) continue;
    if (!out.has(m[1])) out.set(m[1], new Map());
    out.get(m[1])!.set(m[2], m[3]);
  }
  return out;
}

function conditionFindings(p: KObj, subject: string): Finding[] {
  const out: Finding[] = [];
  for (const a of (p.status?.ancestors ?? []) as any[]) {
    const gw = `${a.ancestorRef?.namespace}/${a.ancestorRef?.name}`;
    for (const c of (a.conditions ?? []) as any[]) {
      if (c.status !== 'True') {
        out.push({ level: 'problem', subject, message: `on Gateway ${gw}: ${c.type}=False ${c.reason}: ${c.message}` });
      } else if (c.type === 'Accepted' && /dropped/.test(c.message ?? '')) {
        out.push({ level: 'note', subject, message: `on Gateway ${gw}: ${c.message}` });
      }
    }
  }
  if (!(p.status?.ancestors ?? []).length) {
    const attached = ((p.status?.conditions ?? []) as any[]).find((c) => c.type === 'Attached');
    out.push({
      level: 'problem',
      subject,
      message: attached
        ? `Attached=${attached.status} ${attached.reason}: ${attached.message}`
        : 'no status written yet',
    });
  }
  return out;
}

export function explainBackendConfigFindings(world: World, t: Target): Finding[] | undefined {
  const p = find(world.backendConfigPolicies ?? [], t.namespace, t.name);
  if (!p) return undefined;
  const subject = subjectOf('BackendConfigPolicy', t);
  const policy = `BackendConfigPolicy/${t.namespace}/${t.name}`;
  const findings = conditionFindings(p, subject);
  for (const g of backendConfigGateways(p)) {
    const px = world.proxies[`${g.namespace}/${g.name}`];
    for (const pod of px?.pods ?? []) {
      if (!pod.dump) continue;
      const clusters = clustersNaming(pod.dump, policy);
      const flags = hostFlags(pod.clusters);
      if (!clusters.size) {
        findings.push({
          level: 'note',
          subject,
          message: `proxy ${pod.pod} (Gateway ${g.namespace}/${g.name}): no cluster names this policy in its config_dump`,
        });
      }
      for (const [name, settings] of clusters) {
        findings.push({
          level: 'ok',
          subject,
          message: `proxy ${pod.pod}: cluster ${name} carries its ${settings.join(', ')}`,
        });
        const hosts = [...(flags.get(name) ?? new Map<string, string>())];
        const bad = hosts.filter(([, f]) => f !== 'healthy');
        for (const [host, f] of bad) {
          const why = Object.entries(FLAG_CAUSES)
            .filter(([flag]) => f.includes(flag))
            .map(([, w]) => w);
          findings.push({
            level: 'problem',
            subject,
            message: `proxy ${pod.pod}: host ${host} of cluster ${name} is ${f}: ${why.join('; ') || 'unhealthy'}`,
          });
        }
        if (hosts.length && bad.length === hosts.length) {
          findings.push({
            level: 'problem',
            subject,
            message: `proxy ${pod.pod}: no healthy host in cluster ${name}: requests to it get 503 "no healthy upstream" (response flag UH) unless the healthy panic threshold sends them to all hosts`,
          });
        }
      }
    }
  }
  return findings;
}
