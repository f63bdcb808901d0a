// lab:down's last sweep (stopLabProcess) kills the pods of its own lab process only: two labs of one name under two
// GWLAB_HOMEs share the lab tag, and a 60-min soak's lab:down once killed every pod of a 2 h soak beside it (15 failed
// requests, two restarts per pod at the minute the first soak ended).
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { writeLabRecord } from '../state.ts';
import { TAG_LAB, TAG_POD, TAG_RUN } from './node/runtime/orphans.ts';
import { stopLabProcess } from './process.ts';

const home = mkdtempSync(join(tmpdir(), 'gwlab-stop-'));
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) c.kill('SIGKILL');
  rmSync(home, { recursive: true, force: true });
});

const pod = (lab: string, run: string): ChildProcess => {
  const c = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)'], {
    env: { PATH: process.env.PATH, [TAG_LAB]: lab, [TAG_RUN]: run, [TAG_POD]: 'ns/p' },
  });
  children.push(c);
  return c;
};
const alive = (c: ChildProcess) => c.exitCode === null && c.signalCode === null;

it("kills its own lab process's pods, not those of a lab of the same name under another GWLAB_HOME", async () => {
  // A lab process that is gone (a pid that has just exited) and a live one of another home, both named 'twin'.
  const gone = spawnSync(process.execPath, ['-e', '']).pid!;
  const ours = pod('twin', `${gone}-aaaa`);
  const theirs = pod('twin', `${process.pid}-bbbb`);
  await new Promise((r) => setTimeout(r, 200));
  writeLabRecord({ name: 'twin', index: 0, backend: 'embedded', pid: gone, kubeconfig: '' }, home);
  const { leftovers } = await stopLabProcess('twin', home, 1000);
  await new Promise((r) => setTimeout(r, 200));
  expect(leftovers).toBe(1);
  expect(alive(ours)).toBe(false);
  expect(alive(theirs)).toBe(true);
});
