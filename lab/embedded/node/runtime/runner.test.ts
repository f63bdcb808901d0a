// The process runner with plain processes: argv and $(VAR) expansion, env tags, working directory, logs of the
// current and previous instance, graceful stop and SIGKILL after the grace period, exit codes and reasons.
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { containerArgv } from '../kubelet/images.ts';
import { waitForLog } from '../testing/testbed.ts';
import { instanceLog, newInstanceLog, readLog } from './logs.ts';
import { findTaggedProcesses } from './orphans.ts';
import { type ContainerStart, ProcessRunner } from './runner.ts';

describe('process runner', () => {
  let dir: string;
  let runner: ProcessRunner;
  const lab = `runner-${randomBytes(3).toString('hex')}`;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'gwlab-runner-'));
    runner = new ProcessRunner({ lab });
  });
  afterAll(async () => {
    await runner.close(1);
    rmSync(dir, { recursive: true, force: true });
  });

  const spec = (container: string, argv: string[], extra: Partial<ContainerStart> = {}): ContainerStart => ({
    namespace: 'ns1',
    pod: 'pod1',
    container,
    argv,
    env: {},
    logFile: newInstanceLog(join(dir, container), 0),
    ...extra,
  });

  it('runs command/args with $(VAR) expansion, env, tags and workingDir, and logs stdout/stderr', async () => {
    const env = { GREETING: 'hello', WHO: 'world' };
    const argv = containerArgv(
      { command: ['node', '-e'] },
      {
        args: [
          'console.log(process.argv[1], process.cwd(), process.env.GWLAB_POD, process.env.GWLAB_LAB); console.error("oops")',
          '$(GREETING)-$(WHO)-$$(WHO)-$(MISSING)',
        ],
      },
      env,
    );
    const wd = join(dir, 'wd');
    mkdirSync(wd);
    const p = runner.start(spec('echo', argv, { env, workingDir: wd }));
    const exit = await p.exited;
    expect(exit).toMatchObject({ exitCode: 0, reason: 'Completed', signal: null });
    const out = readLog(p.spec.logFile!);
    expect(out).toContain(`hello-world-$(WHO)-$(MISSING) ${wd} ns1/pod1 ${lab}\n`);
    expect(out).toContain('oops\n');
    const ts = readLog(p.spec.logFile!, { timestamps: true });
    expect(ts).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z hello-world/m);
  });

  it('reports exit codes, and StartError for a missing executable or working directory', async () => {
    expect(await runner.start(spec('fail', ['node', '-e', 'process.exit(3)'])).exited).toMatchObject({
      exitCode: 3,
      reason: 'Error',
    });
    const missing = runner.start(spec('missing', ['no-such-program-xyz']));
    expect(await missing.exited).toMatchObject({ exitCode: 128, reason: 'StartError' });
    expect(readLog(missing.spec.logFile!)).toContain('executable file not found in $PATH');
    const badWd = await runner.start(spec('badwd', ['node', '-e', '1'], { workingDir: join(dir, 'nope') })).exited;
    expect(badWd).toMatchObject({ reason: 'StartError', message: expect.stringContaining('does not exist') });
  });

  it('stops gracefully with SIGTERM, and with SIGKILL after the grace period', async () => {
    const graceful = runner.start(
      spec('graceful', [
        'node',
        '-e',
        'process.on("SIGTERM", () => { console.log("bye"); process.exit(0) }); console.log("up"); setInterval(() => {}, 1000)',
      ]),
    );
    await waitForLog(graceful.spec.logFile!, 'up');
    expect(await graceful.stop(5)).toMatchObject({ exitCode: 0, reason: 'Completed' });
    expect(readLog(graceful.spec.logFile!)).toContain('bye');

    const stubborn = runner.start(
      spec('stubborn', [
        'node',
        '-e',
        'process.on("SIGTERM", () => console.log("ignored")); console.log("up"); setInterval(() => {}, 1000)',
      ]),
    );
    await waitForLog(stubborn.spec.logFile!, 'up');
    const t0 = Date.now();
    expect(await stubborn.stop(0.3)).toMatchObject({ exitCode: 137, signal: 'SIGKILL', reason: 'Error' });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(250);
    expect(readLog(stubborn.spec.logFile!)).toContain('ignored');
  });

  it('kills what a container leaves behind when it exits, like a PID namespace going away', async () => {
    const p = runner.start(spec('leaver', ['sh', '-c', 'sleep 300 & echo started; exit 1']));
    expect(await p.exited).toMatchObject({ exitCode: 1 });
    expect(findTaggedProcesses({ run: runner.runId, container: 'leaver' })).toEqual([]);
  });

  it('keeps the logs of the current and the previous instance', async () => {
    const logDir = join(dir, 'restarts');
    for (let i = 0; i < 3; i++) {
      await runner.start(
        spec('restarts', ['node', '-e', `console.log("instance ${i}")`], { logFile: newInstanceLog(logDir, i) }),
      ).exited;
    }
    expect(readLog(instanceLog(logDir)!)).toBe('instance 2\n');
    expect(readLog(instanceLog(logDir, true)!)).toBe('instance 1\n');
  });
});
