// One lab for the whole scenario suite. By default a throw-away embedded lab under a temp GWLAB_HOME (never the
// user's lab), brought up by the same code as `npm run lab:up`. Set GWLAB_SCENARIO_KUBECONFIG (and optionally
// GWLAB_SCENARIO_CONTEXT) to run the scenarios against any other cluster that already has the system installed, e.g.
// a kind lab or a second embedded lab (`--cluster existing`). KEEP=1 keeps the lab (and prints how to remove it).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { labDown, labUp } from '../../lab/lifecycle.ts';
import { Progress } from '../../lab/progress.ts';
import { gwlabHome } from '../../lab/state.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    kubeconfig: string;
    context: string;
    labName: string;
    labHome: string;
    backend: string;
    /** reports/<run-id> for failure artifacts: scripts/test.ts's GWLAB_REPORT_DIR, or one for this vitest run. */
    reportDir: string;
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
    project.provide('kubeconfig', external);
    project.provide('context', process.env.GWLAB_SCENARIO_CONTEXT ?? '');
    project.provide('labName', process.env.GWLAB_SCENARIO_LAB ?? 'external');
    project.provide('labHome', process.env.GWLAB_HOME ?? '');
    project.provide('backend', 'existing');
    return;
  }
  // KEEP=1: the lab is registered under the user's GWLAB_HOME as `scenarios`, so a plain
  // `npm run lab:down -- --name scenarios` removes it, and the next KEEP=1 run reuses it.
  const keep = process.env.KEEP === '1';
  const madeHome = !process.env.GWLAB_SCENARIO_HOME && !keep;
  const home =
    process.env.GWLAB_SCENARIO_HOME ?? (keep ? gwlabHome() : mkdtempSync(join(tmpdir(), 'gwlab-scenarios-')));
  mkdirSync(home, { recursive: true });
  const name = keep ? 'scenarios' : `scn-${process.pid}`;
  const lines: string[] = [];
  const progress = new Progress({ sink: { write: (l) => lines.push(l) } });
  const t0 = performance.now();
  let up: Awaited<ReturnType<typeof labUp>>;
  try {
    // The contract's procedures use the sample application (4.5) and ext auth (section 7): both are installed.
    up = await labUp({ name, home, backend: 'embedded', progress, withSampleApp: true, withExtAuth: true });
  } catch (err) {
    process.stderr.write(`${lines.join('\n')}\n`);
    await labDown({ name, home, progress }).catch(() => undefined);
    throw err;
  }
  const report = process.env.GWLAB_REPORT_DIR;
  if (report) {
    writeFileSync(
      join(report, 'lab-up.txt'),
      `${lines.join('\n')}\nlab ${name} up in ${Math.round(performance.now() - t0)} ms (GWLAB_HOME=${home})\n`,
    );
  }
  project.provide('kubeconfig', up.kubeconfig);
  project.provide('context', up.context);
  project.provide('labName', name);
  project.provide('labHome', home);
  project.provide('backend', 'embedded');

  return async () => {
    if (process.env.KEEP === '1') {
      process.stderr.write(
        `\nKEEP=1: lab ${name} is still running.\n  export KUBECONFIG=${up.kubeconfig}\n  remove it: ${home === gwlabHome() ? '' : `GWLAB_HOME=${home} `}npm run lab:down -- --name ${name}\n`,
      );
      return;
    }
    await labDown({ name, home, progress: new Progress({ quiet: true }) });
    // The throw-away home this setup made (never a user's GWLAB_HOME or a given GWLAB_SCENARIO_HOME).
    if (madeHome) rmSync(home, { recursive: true, force: true });
  };
}
