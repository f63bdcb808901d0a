// Transcribes upstream Gateway API's CEL test tables (tests/cel/*_test.go at a tag) into
// tests/gateway-api/cel-tables.json, which tests/gateway-api/cel-tables.test.ts runs against the embedded API server.
// Usage: npm run -s transcribe:gateway-api-cel -- [--tag v1.6.1] [--repo <bare git dir>]
//
// The tables are Go: per test function a `[]struct{...}{ cases }` literal and a t.Run body that builds the object
// from the case (a composite literal that reads `tc.<field>`, or a base object that the case's `mutate` closure
// assigns to) and creates it (then, with `mutateStatus`, updates its status; GatewayClass: creates, then updates).
// transcribe-gateway-api-cel/ reads that subset of Go (go-reader.ts) with the JSON names, zero values and constants
// of the upstream API packages (go-types.ts), per test function (tables.ts). A case it cannot read (a `for` loop in a
// closure, an unknown construct) is written with `untranscribed: <why>`, so that the test shows it, never drops it.
// Each case keeps its upstream test function, name and expected substrings.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readApiSource } from './transcribe-gateway-api-cel/go-types.ts';
import { transcribeFile } from './transcribe-gateway-api-cel/tables.ts';

const args = process.argv.slice(2);
const opt = (k: string, d: string) => (args.includes(k) ? args[args.indexOf(k) + 1] : d);
const TAG = opt('--tag', 'v1.6.1');
const REPO = opt('--repo', '/work/.mirror/kubernetes-sigs+gateway-api/repo');
const git = (...a: string[]) =>
  execFileSync('git', ['--git-dir', REPO, ...a], { encoding: 'utf8', maxBuffer: 1 << 26 });
const show = (p: string) => git('show', `${TAG}:${p}`);

for (const f of git('ls-tree', '-r', '--name-only', TAG, 'apis', 'apisx').split('\n'))
  if (f.endsWith('.go') && !f.endsWith('_test.go') && !f.includes('zz_generated')) readApiSource(show(f));

const files = git('ls-tree', '--name-only', TAG, 'tests/cel/')
  .split('\n')
  .filter((f) => f.endsWith('_test.go') && !f.endsWith('main_test.go'))
  .map((f) => f.replace('tests/cel/', ''));
const cases = files.flatMap((f) => transcribeFile(f, show(`tests/cel/${f}`)));
const outFile = join(import.meta.dirname, '..', 'tests', 'gateway-api', 'cel-tables.json');
writeFileSync(
  outFile,
  `${JSON.stringify({ source: `kubernetes-sigs/gateway-api ${TAG} tests/cel`, cases }, null, 2)}\n`,
);
// In the project's JSON format (Biome), so that lint passes on the generated file.
execFileSync('npx', ['biome', 'format', '--write', outFile], { stdio: 'ignore' });
const bad = cases.filter((c) => c.untranscribed);
process.stdout.write(`${cases.length} cases, ${bad.length} not transcribed\n`);
for (const b of bad) process.stdout.write(`  ${b.file} ${b.test} ${JSON.stringify(b.name)}: ${b.untranscribed}\n`);
