// `npm run bench:proxy -- --vs <checkout>`: this checkout's proxy against another's (a commit before a change, in a
// worktree with its own `npm ci`), side by side in one run on one machine: the sample application, then both
// proxies on the bench's route table (route-table.ts: the same bootstrap for both), then closed-loop rounds loading
// both at once (side-by-side.ts, concurrent: whatever else the machine does weighs on both alike; an A/A run of one
// proxy twice reads 1.00-1.06) → per proxy req/s, p50/p99 and CPU µs per request, and this one's throughput over the
// other's. Writes reports/bench/proxy-vs.json and proxy-vs.md.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { versusCheckout } from '../shared/checkout.ts';
import { repoRoot } from '../shared/paths.ts';
import { progress, reportJson, writeReports } from '../shared/reports.ts';
import { round2 } from '../shared/stats.ts';
import { proxyBootstrap } from './route-table.ts';
import { startProxyProcess, startSampleApp } from './servers.ts';
import { DURATION, FIXED_ROUNDS } from './settings.ts';
import { medianRatio, proxiesSideBySide } from './side-by-side.ts';

const step = progress('proxy');

export async function proxyVersus(otherRoot: string): Promise<void> {
  const { other, names } = versusCheckout(otherRoot, join('system', 'main.ts'));
  const dir = mkdtempSync(join(tmpdir(), 'gwlab-bench-vs-'));
  try {
    const bootstrap = proxyBootstrap((await startSampleApp()).port);
    const self = await startProxyProcess(bootstrap, dir, 'self');
    const them = await startProxyProcess(bootstrap, dir, 'other', other);
    step(`${names.self} vs ${names.other}: ${FIXED_ROUNDS} rounds of ${DURATION} s, both loaded at once`);
    const s = await proxiesSideBySide({ self, other: them }, { rounds: FIXED_ROUNDS, seconds: DURATION });
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
