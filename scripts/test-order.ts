// The order test files start in (vitest.config.ts `sequence.sequencer`): longest first, so that the files that take
// longest do not start last and hold the run open alone. vitest's own BaseSequencer already puts files it has a
// duration for longest first, but it keeps those durations in its cache under node_modules, which a fresh `npm ci`
// (every CI run) removes; then it orders by file size. The files below take long by design, not by chance — they
// wait on a clock (an informer idle for 90 s, tokens renewed several times) or install the project afresh — so they
// go first whatever the cache says, in this order; the rest keep vitest's order.
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

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

export function longFirst<T>(files: T[], pathOf: (f: T) => string): T[] {
  const rank = (f: T) => {
    const i = LONG_BY_DESIGN.indexOf(pathOf(f));
    return i < 0 ? LONG_BY_DESIGN.length : i;
  };
  // Array.prototype.sort is stable: the others keep the order they came in.
  return [...files].sort((a, b) => rank(a) - rank(b));
}

export class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    // vitest's order keeps each project's files together (projects run one after another): so does this.
    const byProject = new Map<string, TestSpecification[]>();
    for (const s of await super.sort(files))
      byProject.set(s.project.name, [...(byProject.get(s.project.name) ?? []), s]);
    return [...byProject.values()].flatMap((specs) =>
      longFirst(specs, (s) => relative(s.project.config.root, s.moduleId)),
    );
  }
}
