// npm run conformance -- [--profile GATEWAY-HTTP] [--run <ShortName>] [--name <lab> | --kubeconfig <f> [--context <c>]]
//   [--report <file>]
// Runs the ported Gateway API v1.6.1 conformance tests (conformance/) as the vitest project `conformance` and writes
// the ConformanceReport YAML (reports/conformance/ unless --report). Without --name/--kubeconfig: a throw-away
// embedded lab, started and stopped by the project's global setup.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { conformanceEnv } from '../conformance/support/options.ts';
import { kubeconfigOfContext, resolveKubeconfig } from '../lab/toolkit/kubeconfig.ts';
import { parseFlags, run, usageError } from './flags.ts';
import { spawnVitest } from './vitest-process.ts';

const USAGE = `usage: npm run conformance -- [--profile GATEWAY-HTTP] [--run <ShortName>]
                              [--name <lab> | --kubeconfig <file> [--context <ctx>]] [--report <file>]

Runs the upstream Gateway API v1.6.1 conformance tests ported to vitest (conformance/tests/, one file per upstream
test) and writes an upstream-shaped ConformanceReport (reports/conformance/<date>-report.yaml, or --report).
Tests of features gwlab does not support (conformance/utils/features.ts) are skipped and reported as skipped.

  --profile <p>     the profiles the report covers (repeat or comma-separate; default all ported: GATEWAY-HTTP, -TCP, -UDP)
  --run <name>      only this test (its ShortName, e.g. HTTPRouteSimpleSameNamespace); the others are skipped
  --name <lab>      run against that lab (it must be up: npm run lab:up -- --name <lab>)
  --kubeconfig <f>  run against the cluster of that kubeconfig (--context to pick one); the system must be installed
  (none)            a throw-away embedded lab, brought up and removed by the run`;

await run(async () => {
  const flags = parseFlags({ string: ['profile', 'run', 'report'] });
  const a = flags.args;
  if (a.help) {
    console.log(USAGE);
    return;
  }
  if (a._.length) usageError(USAGE, `unexpected argument ${a._[0]}`);
  if (a.kubeconfig && flags.nameGiven) usageError(USAGE, '--name and --kubeconfig: give one');
  const profiles = ([] as string[]).concat(a.profile ?? []).flatMap((p) => String(p).split(','));
  let tmp: string | undefined;
  let kubeconfig: string | undefined;
  let context: string | undefined;
  if (a.kubeconfig || flags.nameGiven) {
    const r = resolveKubeconfig({ kubeconfig: a.kubeconfig, context: a.context, name: a.name, home: flags.home });
    tmp = mkdtempSync(join(tmpdir(), 'gwlab-conformance-kc-'));
    kubeconfig = join(tmp, 'kubeconfig');
    writeFileSync(kubeconfig, kubeconfigOfContext(r), { mode: 0o600 });
    context = r.context;
  }
  let env: Record<string, string>;
  try {
    env = conformanceEnv({ profiles, run: a.run, kubeconfig, context, report: a.report });
  } catch (err) {
    usageError(USAGE, (err as Error).message);
  }
  const { child, exited } = spawnVitest(
    ['--project', 'conformance', '--reporter=default', '--reporter=./conformance/support/reporter.ts'],
    { stdio: 'inherit', env: { ...process.env, ...env } },
  );
  for (const sig of ['SIGINT', 'SIGTERM'] as const) process.on(sig, () => child.kill(sig));
  const code = await exited;
  if (tmp) rmSync(tmp, { recursive: true, force: true });
  process.exitCode = code;
});
