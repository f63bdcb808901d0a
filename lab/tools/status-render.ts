// lab:status as text: one section per part (cluster, control plane, Gateways, conditions, proxies), then the problems
// that set the exit code and the warnings that do not.

import type { StatusReport } from './status.ts';
import type { ConditionRow, ProxyRow } from './status-rows.ts';
import { type Column, renderTable } from './table.ts';

/** A first column that marks problem (✗) and warning (!) rows and is blank for the rest. */
const MARK: Column = { header: '', emptyAs: '' };

const indent = (s: string) =>
  s
    .split('\n')
    .map((l) => `  ${l}`)
    .join('\n');

const gen = (r: ConditionRow) =>
  r.observedGeneration === undefined && r.generation === undefined
    ? ''
    : `${r.observedGeneration ?? '-'}/${r.generation ?? '-'}${r.stale ? ' STALE' : ''}`;

const mark = (h: string) => (h === 'problem' ? '✗' : h === 'warning' ? '!' : '');

/** The table with a leading marker column, which is left out when every row is ok. */
function markedTable(columns: (string | Column)[], rows: { health: string; cells: string[] }[]): string {
  if (rows.every((r) => r.health === 'ok'))
    return renderTable(
      columns,
      rows.map((r) => r.cells),
    );
  return renderTable(
    [MARK, ...columns],
    rows.map((r) => [mark(r.health), ...r.cells]),
  );
}

export function conditionsTable(rows: ConditionRow[], opts: { verbose?: boolean } = {}): string {
  const columns = ['NAMESPACE', 'NAME', 'PARENT/TARGET', 'TYPE', 'STATUS', 'REASON', 'GEN'];
  return markedTable(
    opts.verbose ? [...columns, 'MESSAGE'] : columns,
    rows.map((r) => {
      const cells = [r.namespace, `${r.kind.toLowerCase()}/${r.name}`, r.target, r.type, r.status, r.reason, gen(r)];
      return { health: r.health, cells: opts.verbose ? [...cells, r.message] : cells };
    }),
  );
}

export function proxiesTable(rows: ProxyRow[], opts: { verbose?: boolean } = {}): string {
  return markedTable(
    ['GATEWAY', 'NODE', 'TYPE', 'SENT', 'ACKED', 'STATUS', { header: 'LAST NACK', max: opts.verbose ? undefined : 80 }],
    rows.map((r) => ({
      health: r.health,
      cells: [
        r.gateway,
        r.node,
        r.type,
        r.sent ?? '',
        r.acked ?? '',
        r.status,
        r.lastNack ? `v${r.lastNack.version} ${r.lastNack.at ?? ''}: ${r.lastNack.detail ?? ''}` : '',
      ],
    })),
  );
}

export function renderStatus(s: StatusReport, opts: { verbose?: boolean } = {}): string {
  const out: string[] = [];
  const c = s.cluster;
  const lab = c.lab
    ? `lab ${c.lab.name} (${c.lab.backend}${c.lab.pid ? `, pid ${c.lab.pid} ${c.lab.running ? 'running' : 'NOT RUNNING'}` : ''})`
    : '';
  out.push('Cluster');
  out.push(`  ${[c.server, `context ${c.context}`, c.version ?? '', lab].filter(Boolean).join('   ')}`);
  for (const n of c.nodes) out.push(`  node ${n.name}: ${n.ready ? 'Ready' : `NOT Ready (${n.reason})`}`);
  if (c.error) out.push(`  ✗ ${c.error}`);

  const cp = s.controlPlane;
  out.push('', 'Control plane');
  if (!cp.found) {
    out.push(`  ✗ deployment ${cp.namespace}/${cp.deployment}: ${cp.error ?? 'not found'}`);
  } else {
    out.push(
      `  deployment ${cp.namespace}/${cp.deployment}: ${cp.ready}/${cp.desired} ready   validation ${cp.validation}${opts.verbose && cp.image ? `   image ${cp.image}` : ''}`,
    );
    if (cp.pods.length) {
      out.push(
        indent(
          renderTable(
            ['POD', 'READY', 'STATUS', 'RESTARTS'],
            cp.pods.map((p) => [p.name, p.ready ? 'yes' : 'no', p.state, String(p.restarts)]),
          ),
        ),
      );
    }
    if (cp.error) out.push(`  ✗ ${cp.error}`);
  }

  const scope = s.namespace ? `namespace ${s.namespace}` : 'all namespaces';
  out.push('', `Gateways (${scope})`);
  if (!s.gateways.length) out.push('  none');
  else {
    out.push(
      indent(
        renderTable(
          ['NAMESPACE', 'NAME', 'CLASS', 'ADDRESS', 'LISTENERS', 'PROXIES'],
          s.gateways.map((g) => [
            g.namespace,
            g.name,
            g.class,
            g.addresses.join(','),
            g.listeners.join(' '),
            `${g.proxiesReady}/${g.proxyPods.length} ready`,
          ]),
        ),
      ),
    );
  }

  out.push('', `Conditions (${scope}; GEN = observedGeneration/generation)`);
  out.push(s.conditions.length ? indent(conditionsTable(s.conditions, opts)) : '  none');

  out.push('', 'Proxies (control plane /snapshots/xds)');
  if (!s.proxies.reachable) out.push(`  ✗ not reachable: ${s.proxies.reason}`);
  else if (!s.proxies.rows.length) out.push(`  none connected${s.proxies.reason ? `: ${s.proxies.reason}` : ''}`);
  else out.push(indent(proxiesTable(s.proxies.rows, opts)));

  out.push('');
  if (s.problems.length) {
    out.push(`✗ ${s.problems.length} problem(s):`);
    for (const p of s.problems) out.push(`  - ${p}`);
  }
  if (s.warnings.length) {
    out.push(`! ${s.warnings.length} warning(s):`);
    for (const w of s.warnings) out.push(`  - ${w}`);
  }
  if (!s.problems.length) out.push(`✓ no problems (${s.elapsedMs} ms)`);
  else out.push(`(${s.elapsedMs} ms)`);
  return `${out.join('\n')}\n`;
}
