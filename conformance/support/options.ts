// `npm run conformance` options → the environment of the conformance vitest project (support/global-setup.ts,
// support/run.ts, support/reporter.ts read it): which profiles the report covers, which single test runs (upstream's
// --run-test: an unknown ShortName is an error, as upstream's FailNow), which cluster (none: a throw-away embedded lab).
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PROFILES } from '../utils/features.ts';

const TESTS = join(resolve(dirname(fileURLToPath(import.meta.url)), '..'), 'tests');

/** Every ported test's ShortName, read from the test files. */
export function portedShortNames(dir = TESTS): string[] {
  const names: string[] = [];
  for (const f of readdirSync(dir).filter((n) => n.endsWith('.test.ts'))) {
    for (const m of readFileSync(join(dir, f), 'utf8').matchAll(/shortName: '([A-Za-z0-9]+)'/g)) names.push(m[1]);
  }
  return names.sort();
}

export interface ConformanceOptions {
  profiles?: string[];
  run?: string;
  /** A kubeconfig file of one context (the cluster must run the system), and that context. */
  kubeconfig?: string;
  context?: string;
  report?: string;
}

/** The environment for the options; throws with the fix for an unknown profile or test. */
export function conformanceEnv(o: ConformanceOptions, names = portedShortNames()): Record<string, string> {
  const env: Record<string, string> = {};
  for (const p of o.profiles ?? []) {
    if (!PROFILES[p]) {
      throw new Error(`--profile ${p}: not ported yet (ported: ${Object.keys(PROFILES).join(', ')})`);
    }
  }
  if (o.profiles?.length) env.GWLAB_CONFORMANCE_PROFILES = o.profiles.join(',');
  if (o.run !== undefined) {
    if (!names.includes(o.run)) {
      const near = names.filter((n) => n.toLowerCase().includes(o.run!.toLowerCase())).slice(0, 5);
      throw new Error(`--run ${o.run}: no such test${near.length ? ` (did you mean ${near.join(', ')}?)` : ''}`);
    }
    env.GWLAB_CONFORMANCE_RUN = o.run;
  }
  if (o.kubeconfig) env.GWLAB_CONFORMANCE_KUBECONFIG = o.kubeconfig;
  if (o.context) env.GWLAB_CONFORMANCE_CONTEXT = o.context;
  if (o.report) env.GWLAB_CONFORMANCE_REPORT = resolve(o.report);
  return env;
}
