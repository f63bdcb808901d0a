// `npm run bench:proxy -- --vs <checkout>`: this checkout's proxy against another's (a commit before a change, in a
// worktree with its own `npm ci`), side by side in one run on one machine: the sample application, then both
// proxies on the bench's route table (route-table.ts: the same bootstrap for both), then closed-loop rounds loading
// both at once (side-by-side.ts, concurrent: whatever else the machine does weighs on both alike; an A/A run of one
// proxy twice reads 1.00-1.06) → per proxy req/s, p50/p99 and CPU µs per request, and this one's throughput over the
// other's. Writes reports/bench/proxy-vs.json and proxy-vs.md.

import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { repoRoot, systemMain } from '../shared/paths.ts';
import { startNode } from '../shared/processes.ts';
import { progress, reportJson, writeReports } from '../shared/reports.ts';
import { round2 } from '../shared/stats.ts';
import { proxyBootstrap } from './route-table.ts';
import { listenerPort, startProxyProcess } from './servers.ts';
import { DURATION, FIXED_ROUNDS } from './settings.ts';
import { medianRatio, sideBySide } from './side-by-side.ts';

const step = progress('proxy');

/** The checkout's commit, for the report (`?` outside git). */
function commitOf(root: string): string {
  try {
    return execFileSync('git', ['-C', root, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
  } catch {
    return '?';
  }
}

export async function proxyVersus(otherRoot: string): Promise<void> {
  const other = resolve(otherRoot);
  if (!existsSync(join(other, 'system', 'main.ts')) || !existsSync(join(other, 'node_modules'))) {
    throw new Error(
      `--vs ${otherRoot}: not a checkout with its dependencies (want system/main.ts and node_modules/); make one with ` +
        '`git worktree add <dir> <commit> && (cd <dir> && npm ci)`',
    );
  }
  const names = { self: `this (${commitOf(repoRoot)})`, other: `other (${commitOf(other)})` };
  const dir = mkdtempSync(join(tmpdir(), 'gwlab-bench-vs-'));
  try {
    const app = await startNode(
      [systemMain, 'sampleapp', '--port', '0', '--host', '127.0.0.1', '--no-access-log'],
      /"port":(\d+)/,
      'sample app',
    );
    const bootstrap = proxyBootstrap(Number(app.match[1]));
    const self = await startProxyProcess(bootstrap, dir, 'self');
    const them = await startProxyProcess(bootstrap, dir, 'other', other);
    step(`${names.self} vs ${names.other}: ${FIXED_ROUNDS} rounds of ${DURATION} s, both loaded at once`);
    const s = await sideBySide(
      { self: await listenerPort(self.admin), other: await listenerPort(them.admin) },
      {
        rounds: FIXED_ROUNDS,
        seconds: DURATION,
        pids: { self: self.child.pid!, other: them.child.pid! },
        concurrent: true,
      },
    );
    const ratio = medianRatio(s, 'self', 'other');
    const cpuRatio =
      s.median.self.cpuUs && s.median.other.cpuUs ? round2(s.median.self.cpuUs / s.median.other.cpuUs) : undefined;
    const result = {
      self: { root: repoRoot, ...s.median.self },
      other: { root: other, ...s.median.other },
      ratio,
      cpuRatio,
      perRound: s.perRound,
    };
    const row = (k: 'self' | 'other') =>
      `| ${names[k]} | ${s.median[k].rps} | ${s.median[k].p50} | ${s.median[k].p99} | ${s.median[k].cpuUs ?? ''} | ${s.median[k].errors + s.median[k].non2xx} |`;
    const md = [
      `# bench:proxy --vs: ${names.self} against ${names.other}`,
      '',
      `${FIXED_ROUNDS} rounds of ${DURATION} s, both proxies loaded at once; medians over the rounds.`,
      '',
      '| proxy | req/s | p50 ms | p99 ms | CPU µs/request | errors |',
      '|---|---|---|---|---|---|',
      row('self'),
      row('other'),
      '',
      `This proxy's throughput over the other's, median of the rounds' ratios: **${ratio}**` +
        (cpuRatio !== undefined ? `; CPU per request, this over the other: **${cpuRatio}**.` : '.'),
      '',
    ].join('\n');
    const out = writeReports({ 'proxy-vs.json': reportJson(result), 'proxy-vs.md': md });
    step(`throughput ratio ${ratio}, CPU/request ratio ${cpuRatio ?? '?'}: ${join(out, 'proxy-vs.md')}`);
    process.stdout.write(md);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
