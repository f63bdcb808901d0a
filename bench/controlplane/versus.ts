// `npm run bench:controlplane -- --vs <checkout>`: this checkout's full translation against another's (a commit
// before a change, in a worktree with its own `npm ci`), side by side in one run: pairs of translation processes
// (controlplane.ts --translate: the bench's 1,000 HTTPRoutes over 10 Gateways, on a fresh pipeline each time), the
// order inside a pair alternating, each process translating BENCH_VS_TRANSLATIONS times (12) and counting the median
// of all but its first two (module loading, the JIT warming up) → per checkout the median of those medians, and this
// one's time over the other's. Writes reports/bench/controlplane-vs.json and controlplane-vs.md.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { versusCheckout } from '../shared/checkout.ts';
import { repoRoot } from '../shared/paths.ts';
import { progress, reportJson, writeReports } from '../shared/reports.ts';
import { median, round1, round2 } from '../shared/stats.ts';

const step = progress('controlplane');
const PAIRS = Number(process.env.BENCH_VS_PAIRS ?? 8);
const TRANSLATIONS = Number(process.env.BENCH_VS_TRANSLATIONS ?? 12);

/** One translation process on `checkout`'s control plane: its translations' ms (the first left out by the child). */
function translations(checkout: string): Promise<number[]> {
  const child = spawn(
    process.execPath,
    [join(repoRoot, 'bench', 'controlplane.ts'), '--translate', checkout, String(TRANSLATIONS)],
    { stdio: ['ignore', 'pipe', 'inherit'], cwd: repoRoot },
  );
  let out = '';
  child.stdout!.on('data', (d) => {
    out += d;
  });
  return new Promise((done, fail) =>
    child.once('exit', (code) => {
      if (code !== 0) return fail(new Error(`translation process on ${checkout} exited ${code}`));
      done(JSON.parse(out.trim().split('\n').pop()!).translationMs);
    }),
  );
}

export async function translationVersus(
  otherRoot: string,
  scale: { routes: number; rules: number; gateways: number },
): Promise<void> {
  const { other, names } = versusCheckout(otherRoot, join('system', 'controlplane', 'pipeline.ts'));
  step(
    `${names.self} vs ${names.other}: full translation of ${scale.routes} HTTPRoutes × ${scale.rules} rules over ` +
      `${scale.gateways} Gateways, ${PAIRS} pairs of processes × ${TRANSLATIONS} translations`,
  );
  const perProcess: Record<'self' | 'other', number[]> = { self: [], other: [] };
  for (let i = 0; i < PAIRS; i++) {
    const order = i % 2 === 0 ? (['self', 'other'] as const) : (['other', 'self'] as const);
    for (const k of order) {
      // The child leaves out the first translation; one more here (the JIT still warming up).
      const ms = await translations(k === 'self' ? repoRoot : other);
      perProcess[k].push(round1(median(ms.slice(1))));
    }
    step(`  pair ${i + 1}: self ${perProcess.self.at(-1)} ms, other ${perProcess.other.at(-1)} ms`);
  }
  const self = round1(median(perProcess.self));
  const them = round1(median(perProcess.other));
  const ratio = round2(self / them);
  const result = { scale, pairs: PAIRS, translations: TRANSLATIONS, self, other: them, ratio, perProcess };
  const md = [
    `# bench:controlplane --vs: ${names.self} against ${names.other}`,
    '',
    `Full translation (resources → IR → xDS JSON) of ${scale.routes} HTTPRoutes × ${scale.rules} rules over ` +
      `${scale.gateways} Gateways: ${PAIRS} pairs of processes, the order inside a pair alternating, each process's ` +
      `median over its translations after the first two; the median of those.`,
    '',
    '| control plane | full translation, ms | per process |',
    '|---|---|---|',
    `| ${names.self} | ${self} | ${perProcess.self.join(', ')} |`,
    `| ${names.other} | ${them} | ${perProcess.other.join(', ')} |`,
    '',
    `This translation's time over the other's: **${ratio}**.`,
    '',
  ].join('\n');
  const out = writeReports({ 'controlplane-vs.json': reportJson(result), 'controlplane-vs.md': md });
  step(`ratio ${ratio}: ${join(out, 'controlplane-vs.md')}`);
  process.stdout.write(md);
}
