// No orphans: when the lab process dies by SIGKILL, every process of its pods (children, grandchildren in their own
// session, non-Node programs) is gone within 5 s. Found by scanning /proc for the GWLAB_LAB tag.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { findTaggedProcesses, killTaggedProcesses } from './orphans.ts';

const FAKE_LAB = join(dirname(fileURLToPath(import.meta.url)), '..', 'testing', 'fake-lab.ts');
const MINI_LAB = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'testing', 'mini-lab.ts');
const APP = join(dirname(fileURLToPath(import.meta.url)), '..', 'testdata', 'http-app.mjs');

describe('no orphans', () => {
  const labs: string[] = [];
  const children: ChildProcess[] = [];
  const dirs: string[] = [];

  afterEach(async () => {
    for (const c of children.splice(0)) c.kill('SIGKILL');
    for (const lab of labs.splice(0)) await killTaggedProcesses({ lab });
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  async function startFakeLab(mode: string): Promise<{ lab: string; child: ChildProcess; pids: number[] }> {
    const lab = `orphan-${randomBytes(3).toString('hex')}`;
    labs.push(lab);
    const dir = mkdtempSync(join(tmpdir(), 'gwlab-orphans-'));
    dirs.push(dir);
    const child = spawn(process.execPath, [FAKE_LAB, lab, dir, mode], { stdio: ['ignore', 'pipe', 'inherit'] });
    children.push(child);
    const pids = await new Promise<number[]>((resolve, reject) => {
      let out = '';
      const timer = setTimeout(() => reject(new Error(`fake lab not ready: ${out}`)), 15_000);
      child.stdout!.on('data', (c) => {
        out += c;
        const m = /ready (\[.*\])/.exec(out);
        if (m) {
          clearTimeout(timer);
          resolve(JSON.parse(m[1]));
        }
      });
      child.once('exit', (code) => reject(new Error(`fake lab exited ${code}: ${out}`)));
    });
    return { lab, child, pids };
  }

  async function goneWithin(lab: string, ms: number): Promise<number> {
    const t0 = Date.now();
    while (findTaggedProcesses({ lab }).length > 0) {
      if (Date.now() - t0 > ms) throw new Error(`left after ${ms} ms: ${JSON.stringify(findTaggedProcesses({ lab }))}`);
      await new Promise((r) => setTimeout(r, 25));
    }
    return Date.now() - t0;
  }

  it('kills every pod process within 5 s of a SIGKILL of the lab (pdeathsig + sentinel + watchdog)', async () => {
    const { lab, child, pids } = await startFakeLab('sentinel');
    expect(pids.length).toBeGreaterThanOrEqual(5);
    child.kill('SIGKILL');
    const ms = await goneWithin(lab, 5000);
    expect(ms).toBeLessThan(5000);
  });

  it('still kills Node grandchildren in their own session without the sentinel (hook watchdog)', async () => {
    const { lab, child, pids } = await startFakeLab('no-sentinel');
    expect(pids.length).toBeGreaterThanOrEqual(2);
    child.kill('SIGKILL');
    const ms = await goneWithin(lab, 5000);
    expect(ms).toBeLessThan(5000);
  });

  it('leaves no pod process of a whole embedded cluster 5 s after the lab process is SIGKILLed', async () => {
    const child = spawn(process.execPath, [MINI_LAB, APP], { stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(child);
    const [run, home] = await new Promise<string[]>((resolve, reject) => {
      let out = '';
      const timer = setTimeout(() => reject(new Error(`mini lab not ready: ${out}`)), 60_000);
      const onData = (c: Buffer) => {
        out += c;
        const m = /ready (\S+) (\S+)/.exec(out);
        if (m) {
          clearTimeout(timer);
          resolve([m[1], m[2]]);
        }
      };
      child.stdout!.on('data', onData);
      child.stderr!.on('data', (c) => (out += c));
      child.once('exit', (code) => reject(new Error(`mini lab exited ${code}: ${out}`)));
    });
    dirs.push(home);
    // Two pods, each: the container, a detached Node grandchild, a shell and its sleep.
    const t1 = Date.now();
    while (findTaggedProcesses({ run }).length < 8) {
      if (Date.now() - t1 > 10_000)
        throw new Error(`pods did not fork: ${JSON.stringify(findTaggedProcesses({ run }))}`);
      await new Promise((r) => setTimeout(r, 25));
    }
    child.kill('SIGKILL');
    const t0 = Date.now();
    while (findTaggedProcesses({ run }).length > 0) {
      if (Date.now() - t0 > 5000) throw new Error(`left after 5 s: ${JSON.stringify(findTaggedProcesses({ run }))}`);
      await new Promise((r) => setTimeout(r, 25));
    }
    await killTaggedProcesses({ run }).catch(() => undefined);
  }, 90_000);
});
