// The labs of the scenario suite. By default throw-away embedded labs under a temp GWLAB_HOME (never the user's lab),
// brought up side by side by the same code as `npm run lab:up`: as many as scenario files may run at once
// (labs.ts: sized to the machine's cores, GWLAB_SCENARIO_LABS to choose), each worker using its own
// (labs.ts, labOfWorker). Set GWLAB_SCENARIO_KUBECONFIG (and optionally GWLAB_SCENARIO_CONTEXT) to run the scenarios
// against any other cluster that already has the system installed, e.g. a kind lab or a second embedded lab
// (`--cluster existing`): one lab, one file at a time. KEEP=1 keeps the one lab (and prints how to remove it).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { labDown, labUp } from '../../lab/lifecycle.ts';
import { Progress } from '../../lab/progress.ts';
import { gwlabHome } from '../../lab/state.ts';
import { type ProvidedLab, scenarioLabCount } from './labs.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The labs, one per concurrently running scenario file (labs.ts). */
    labs: ProvidedLab[];
    /** reports/<run-id> for failure artifacts: scripts/test.ts's GWLAB_REPORT_DIR, or one for this vitest run. */
    reportDir: string;
  }
}

/**
 * How many scenario files this run holds: no more labs than that are started (`npm run scenarios -- 05` needs one).
 * vitest gives a global setup no list of the run's files; its CLI filters are the Vitest instance's filenamePattern
 * (not in its typings), globbed with the project's public globTestFiles. Anything unexpected: undefined (all labs).
 */
async function filesInRun(project: TestProject): Promise<number | undefined> {
  try {
    const filters = (project.vitest as unknown as { filenamePattern?: string[] }).filenamePattern ?? [];
    const { testFiles } = await project.globTestFiles(filters);
    return testFiles.length > 0 ? testFiles.length : undefined;
  } catch {
    return undefined;
  }
}

export default async function setup(project: TestProject) {
  project.provide(
    'reportDir',
    process.env.GWLAB_REPORT_DIR ??
      join(project.config.root, 'reports', new Date().toISOString().replace(/[:.]/g, '-')),
  );
  const external = process.env.GWLAB_SCENARIO_KUBECONFIG;
  if (external) {
    project.provide('labs', [
      {
        kubeconfig: external,
        context: process.env.GWLAB_SCENARIO_CONTEXT ?? '',
        name: process.env.GWLAB_SCENARIO_LAB ?? 'external',
        home: process.env.GWLAB_HOME ?? '',
        backend: 'existing',
      },
    ]);
    return;
  }
  // KEEP=1: the lab is registered under the user's GWLAB_HOME as `scenarios`, so a plain
  // `npm run lab:down -- --name scenarios` removes it, and the next KEEP=1 run reuses it.
  const keep = process.env.KEEP === '1';
  const madeHome = !process.env.GWLAB_SCENARIO_HOME && !keep;
  const home =
    process.env.GWLAB_SCENARIO_HOME ?? (keep ? gwlabHome() : mkdtempSync(join(tmpdir(), 'gwlab-scenarios-')));
  mkdirSync(home, { recursive: true });
  const count = Math.min(scenarioLabCount(), (await filesInRun(project)) ?? Number.POSITIVE_INFINITY);
  const names = keep ? ['scenarios'] : Array.from({ length: count }, (_, i) => `scn-${process.pid}-${i + 1}`);
  const lines = new Map<string, string[]>(names.map((n) => [n, []]));
  const t0 = performance.now();
  const ups = await Promise.allSettled(
    names.map((name) =>
      labUp({
        name,
        home,
        backend: 'embedded',
        progress: new Progress({ sink: { write: (l) => lines.get(name)?.push(l) } }),
        // The contract's procedures use the sample application (4.5) and ext auth (section 7): both are installed.
        withSampleApp: true,
        // Gateway API's experimental channel (a superset of standard): the scenarios exercise the extended features
        // that only it carries (HTTPRoute retry, ListenerSet...), as the conformance suite's lab does.
        gatewayApiChannel: 'experimental',
        withExtAuth: true,
      }).then((up) => ({ up, ms: Math.round(performance.now() - t0) })),
    ),
  );
  const downAll = () =>
    Promise.all(names.map((name) => labDown({ name, home, progress: new Progress({ quiet: true }) }).catch(() => {})));
  const failed = ups.findIndex((u) => u.status === 'rejected');
  if (failed >= 0) {
    process.stderr.write(`${lines.get(names[failed])?.join('\n')}\n`);
    await downAll();
    if (madeHome) rmSync(home, { recursive: true, force: true });
    throw (ups[failed] as PromiseRejectedResult).reason;
  }
  const done = ups.map(
    (u) => (u as PromiseFulfilledResult<{ up: Awaited<ReturnType<typeof labUp>>; ms: number }>).value,
  );
  const report = process.env.GWLAB_REPORT_DIR;
  if (report) {
    writeFileSync(
      join(report, 'lab-up.txt'),
      names
        .map((n, i) => `${lines.get(n)?.join('\n')}\nlab ${n} up in ${done[i].ms} ms (GWLAB_HOME=${home})\n`)
        .join('\n'),
    );
  }
  project.provide(
    'labs',
    names.map((name, i) => ({
      kubeconfig: done[i].up.kubeconfig,
      context: done[i].up.context,
      name,
      home,
      backend: 'embedded',
    })),
  );

  return async () => {
    if (process.env.KEEP === '1') {
      process.stderr.write(
        `\nKEEP=1: lab ${names[0]} is still running.\n  export KUBECONFIG=${done[0].up.kubeconfig}\n  remove it: ${home === gwlabHome() ? '' : `GWLAB_HOME=${home} `}npm run lab:down -- --name ${names[0]}\n`,
      );
      return;
    }
    await downAll();
    // The throw-away home this setup made (never a user's GWLAB_HOME or a given GWLAB_SCENARIO_HOME).
    if (madeHome) rmSync(home, { recursive: true, force: true });
  };
}
