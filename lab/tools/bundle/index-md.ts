// index.md, the first file of a bundle: what the bundle is, what is where, and how each collector went — a failed or
// skipped collector is listed with its reason, so a reader knows what is missing and why.
import type { CollectIndex, CollectorEntry } from '../collect/types.ts';

export interface BundleMeta {
  lab: string;
  context?: string;
  server?: string;
  created: string;
  namespaces: string[];
}

export const LAYOUT: Array<[string, string]> = [
  ['index.md', 'this file'],
  ['index.json', 'the same collector index, machine-readable (files, timings, notes, errors)'],
  [
    'cluster/',
    'version.json (server /version), nodes.yaml, crds.yaml (gateway API group CRDs, served versions), lab.json',
  ],
  [
    'resources/<namespace>/<Kind>.yaml',
    'Gateway API and gwvendor resources with status; Deployments, Pods, Services, EndpointSlices, ConfigMaps, ServiceAccounts; Secrets as metadata only. Cluster-scoped kinds (GatewayClass, Namespace) under resources/_cluster/',
  ],
  ['events/<namespace>.txt, .yaml', 'Events, oldest first: a table, and the full objects'],
  [
    'logs/<namespace>/<pod>/<container>.log',
    'the log of every container (`.previous.log`: the instance before the last restart)',
  ],
  ['controlplane/', 'the control plane admin (9095): snapshots_krt.json, snapshots_xds.json, metrics.txt'],
  [
    'proxies/<namespace>/<pod>/',
    'each proxy admin (19000): config_dump.json (?include_eds), listeners.json, clusters.txt, stats_prometheus.txt, certs.json (/certs), server_info.json',
  ],
];

/** A table cell: one line, no pipe. */
function cell(s: string | undefined): string {
  return (s ?? '').replace(/\|/g, '\\|').replace(/\s*\n\s*/g, '<br>');
}

function detail(c: CollectorEntry): string {
  if (c.status === 'failed') return c.error ?? '';
  if (c.status === 'skipped') return c.reason ?? '';
  // Per-item notes (a log that was not there yet) go to index.json; the summary note is enough here.
  return c.notes?.[0] ?? '';
}

export function renderIndexMd(meta: BundleMeta, index: CollectIndex): string {
  const counts = { ok: 0, failed: 0, skipped: 0 };
  for (const c of index.collectors) counts[c.status]++;
  const lines = [
    `# gwlab bundle: ${meta.lab}`,
    '',
    `Made by \`npm run lab:bundle\` at ${meta.created}${meta.context ? ` from context \`${meta.context}\`` : ''}${meta.server ? ` (API server ${meta.server})` : ''}, in ${(index.durationMs / 1000).toFixed(1)} s. Only reads and port-forwards were made: nothing in the cluster was changed.`,
    '',
    `Namespaces: ${meta.namespaces.map((n) => `\`${n}\``).join(', ')} — those holding Gateway API or gwvendor resources, those they refer to, and the control plane's.`,
    '',
    `Collectors: ${counts.ok} ok, ${counts.failed} failed, ${counts.skipped} skipped.`,
    '',
    '| collector | status | files | time | detail |',
    '|---|---|---|---|---|',
    ...index.collectors.map(
      (c) => `| ${cell(c.name)} | ${c.status} | ${c.files.length} | ${c.ms} ms | ${cell(detail(c))} |`,
    ),
    '',
    '## What is where',
    '',
    '| path | what |',
    '|---|---|',
    ...LAYOUT.map(([p, w]) => `| \`${p}\` | ${cell(w)} |`),
    '',
    '## Redaction',
    '',
    `The values of ${index.redaction.secrets} Secrets (decoded and base64) and the kubeconfig's credentials were replaced by \`<redacted>\` in every file (${index.redaction.replaced} occurrences); Secrets are written with metadata only.${index.redaction.error ? ` **${index.redaction.error}**` : ''}`,
    '',
    '## Files',
    '',
    ...index.collectors.flatMap((c) =>
      c.files.length ? [`- ${c.name}: ${c.files.map((f) => `\`${f}\``).join(', ')}`] : [],
    ),
    '',
  ];
  return lines.join('\n');
}
