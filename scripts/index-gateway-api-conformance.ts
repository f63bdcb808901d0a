// Indexes upstream Gateway API's conformance tests (conformance/tests/*.go at a tag): each test's ShortName, Features
// (pkg/features constants resolved to their names) and whether it is Provisional, into
// conformance/utils/upstream-tests.json. The ConformanceReport lists every upstream test of a profile that has no port
// here as skipped ("not ported"), so the report says what was not run, not only what was.
// Usage: npm run -s index:gateway-api-conformance -- [--tag v1.6.1] [--repo <bare git dir>]
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const args = process.argv.slice(2);
const opt = (k: string, d: string) => (args.includes(k) ? args[args.indexOf(k) + 1] : d);
const TAG = opt('--tag', 'v1.6.1');
const REPO = opt('--repo', '/work/.mirror/kubernetes-sigs+gateway-api/repo');
const OUT = join(dirname(fileURLToPath(import.meta.url)), '..', 'conformance', 'utils', 'upstream-tests.json');
const git = (...a: string[]) =>
  execFileSync('git', ['--git-dir', REPO, ...a], { encoding: 'utf8', maxBuffer: 1 << 26 });
const show = (p: string) => git('show', `${TAG}:${p}`);
const list = (dir: string) =>
  git('ls-tree', '--name-only', TAG, `${dir}/`)
    .split('\n')
    .filter((f) => f.endsWith('.go') && !f.endsWith('_test.go'));

/** `SupportX [FeatureName] = "X"` constants of pkg/features. */
const featureNames = new Map<string, string>();
for (const f of list('pkg/features')) {
  for (const m of show(f).matchAll(/(Support\w+)\s+(?:FeatureName\s*)?=\s*"([^"]+)"/g)) featureNames.set(m[1], m[2]);
}

interface UpstreamTest {
  shortName: string;
  features: string[];
  provisional: boolean;
  file: string;
}

const tests: UpstreamTest[] = [];
for (const f of list('conformance/tests')) {
  const src = show(f);
  for (const m of src.matchAll(/(?:confsuite|suite)\.ConformanceTest\{([\s\S]*?)\n\tTest:/g)) {
    const body = m[1];
    const shortName = /ShortName:\s*"([^"]+)"/.exec(body)?.[1];
    if (!shortName) continue;
    const feats = /Features:\s*\[\]features\.FeatureName\{([\s\S]*?)\}/.exec(body)?.[1] ?? '';
    const features = [...feats.matchAll(/features\.(Support\w+)/g)].map((x) => {
      const name = featureNames.get(x[1]);
      if (!name) throw new Error(`${f}: ${shortName} names unknown feature ${x[1]}`);
      return name;
    });
    tests.push({ shortName, features, provisional: /Provisional:\s*true/.test(body), file: f });
  }
}
tests.sort((a, b) => a.shortName.localeCompare(b.shortName));
writeFileSync(OUT, `${JSON.stringify({ tag: TAG, tests }, null, 1)}\n`);
process.stdout.write(`${tests.length} upstream conformance tests of ${TAG} → ${OUT}\n`);
