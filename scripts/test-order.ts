// The order test files start in (vitest.config.ts `sequence.sequencer`): longest first, so that the files that take
// longest do not start last and hold the run open alone. vitest's own BaseSequencer already puts files it has a
// duration for longest first, but it keeps those durations in its cache under node_modules, which a fresh `npm ci`
// (every CI run) removes; then it orders by file size. The files below take long by design, not by chance — they
// wait on a clock (an informer idle for 90 s, tokens renewed several times) or install the project afresh — so they
// go first whatever the cache says, in this order. The rest go by the durations of a whole run kept in the repository
// (test-durations.json, longest first; files it does not know after them, in vitest's order): ordered by size, small
// but slow files started last and held the run open (a clean-clone CI run: the unit project's last 40 s were
// tests/gateway-api/examples.test.ts, 4 KB and 17 s, started at 314 s of 331). `node scripts/test-order.ts
// reports/latest/files.json` rewrites the table from a run's per-file timings.
import { readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const DURATIONS_FILE = join(ROOT, 'scripts', 'test-durations.json');

/** Paths from the repository root, longest first (durations measured on the 2-core machine, issue 14). */
export const LONG_BY_DESIGN = [
  // unit: ~95 s, an informer idle for over 90 s (the test's point), then restarts.
  'lab/embedded/apiserver/durability.test.ts',
  // scenarios: ~36 s alone, 3-4 min inside the whole suite: `git clone`, `npm ci` and lab:up in a temporary folder.
  'scenarios/91-new-user.test.ts',
  // unit: ~35 s, pod tokens of 10 s renewed several times.
  'lab/embedded/node/kubelet/token-renewal.test.ts',
  // scenarios: ~25 s, a lab with 10 s tokens renewed three times.
  'scenarios/94-token-renewal.test.ts',
];

/** Seconds each test file took in a whole run (path from the repository root → s); {} when there is no table. */
export function knownDurations(file = DURATIONS_FILE): Record<string, number> {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return {};
  }
}

export function longFirst<T>(files: T[], pathOf: (f: T) => string, durations: Record<string, number> = {}): T[] {
  const rank = (f: T) => {
    const i = LONG_BY_DESIGN.indexOf(pathOf(f));
    return i < 0 ? LONG_BY_DESIGN.length : i;
  };
  const known = (f: T) => durations[pathOf(f)] ?? -1;
  // Array.prototype.sort is stable: files of equal rank and no known duration keep the order they came in.
  return [...files].sort((a, b) => rank(a) - rank(b) || known(b) - known(a));
}

/** The table from a run's files.json (scripts/test.ts): seconds per file, one decimal, sorted by path. */
export function durationsFrom(files: { file: string; ms: number }[], root = ROOT): Record<string, number> {
  const out: Record<string, number> = {};
  for (const f of [...files].sort((a, b) => a.file.localeCompare(b.file)))
    out[relative(root, f.file)] = Math.round(f.ms / 100) / 10;
  return out;
}

export class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    // vitest's order keeps each project's files together (projects run one after another): so does this.
    const byProject = new Map<string, TestSpecification[]>();
    for (const s of await super.sort(files))
      byProject.set(s.project.name, [...(byProject.get(s.project.name) ?? []), s]);
    const durations = knownDurations();
    return [...byProject.values()].flatMap((specs) =>
      longFirst(specs, (s) => relative(s.project.config.root, s.moduleId), durations),
    );
  }
}

if (import.meta.main) {
  const from = process.argv[2];
  if (!from) {
    process.stderr.write('usage: node scripts/test-order.ts <reports/<run>/files.json>\n');
    process.exit(2);
  }
  // The run's own checkout: files.json sits in <checkout>/reports/<run-id>/ (its paths are absolute).
  const runRoot = join(dirname(realpathSync(from)), '..', '..');
  const table = durationsFrom(JSON.parse(readFileSync(from, 'utf8')), runRoot);
  writeFileSync(DURATIONS_FILE, `${JSON.stringify(table, null, 1)}\n`);
  process.stdout.write(`${Object.keys(table).length} files' durations → ${relative(process.cwd(), DURATIONS_FILE)}\n`);
}
