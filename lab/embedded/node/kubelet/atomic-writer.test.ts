// The atomic writer of volumes (atomic-writer.ts), checked against Kubernetes' layout and rules
// (pkg/volume/util/atomic_writer.go and its atomic_writer_test.go): `..data` → `..<UTC timestamp>.<random>`,
// user-visible top-level names as symlinks into `..data`, no write when nothing changed, names that left the payload
// removed, invalid paths refused, the replaced version kept until the next write (a deviation, see atomic-writer.ts);
// and what the layout is for: a reader polling a file while it is replaced never sees it missing or half-written.
import { lstatSync, readdirSync, readFileSync, readlinkSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../../testing/tmp.ts';
import { DATA_DIR, PayloadError, validatePayload, writeAtomically } from './atomic-writer.ts';

const f = (data: string, mode = 0o644) => ({ data, mode });

describe('atomic writer', () => {
  it('writes the payload into a timestamped folder behind ..data, with symlinks for the top-level names', () => {
    const dir = tempDir('gwlab-aw-');
    const now = new Date(Date.UTC(2025, 0, 2, 3, 4, 5));
    expect(writeAtomically(dir, { token: f('t1', 0o600), 'sub/a.txt': f('a'), namespace: f('ns') }, now)).toBe(true);
    const ts = readlinkSync(join(dir, DATA_DIR));
    expect(ts).toMatch(/^\.\.2025_01_02_03_04_05\.\w+$/);
    expect(readlinkSync(join(dir, 'token'))).toBe('..data/token');
    expect(readlinkSync(join(dir, 'sub'))).toBe('..data/sub');
    expect(readFileSync(join(dir, 'token'), 'utf8')).toBe('t1');
    expect(readFileSync(join(dir, 'sub', 'a.txt'), 'utf8')).toBe('a');
    expect(statSync(join(dir, 'token')).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, ts)).mode & 0o777).toBe(0o755);
    expect(readdirSync(dir).sort()).toEqual([ts, DATA_DIR, 'namespace', 'sub', 'token'].sort());
  });

  it('swaps in a new version, removing names that left the payload, and the old folder at the next write', () => {
    const dir = tempDir('gwlab-aw-');
    writeAtomically(dir, { token: f('t1'), old: f('x'), 'sub/a.txt': f('a'), 'sub/b.txt': f('b') });
    const first = readlinkSync(join(dir, DATA_DIR));
    expect(writeAtomically(dir, { token: f('t2'), 'sub/a.txt': f('a') })).toBe(true);
    const second = readlinkSync(join(dir, DATA_DIR));
    expect(second).not.toBe(first);
    expect(readFileSync(join(dir, 'token'), 'utf8')).toBe('t2');
    expect(readdirSync(join(dir, 'sub'))).toEqual(['a.txt']);
    // The previous version stays until the next write (a reader may have resolved ..data to it just before).
    expect(readdirSync(dir).sort()).toEqual([first, second, DATA_DIR, 'sub', 'token'].sort());
    expect(() => lstatSync(join(dir, 'old'))).toThrow(/ENOENT/);
    writeAtomically(dir, { token: f('t3'), 'sub/a.txt': f('a') });
    const third = readlinkSync(join(dir, DATA_DIR));
    expect(readdirSync(dir).sort()).toEqual([second, third, DATA_DIR, 'sub', 'token'].sort());
  });

  it('keeps the replaced version readable at the path a reader resolved, until the next write', () => {
    const dir = tempDir('gwlab-aw-');
    writeAtomically(dir, { token: f('t1') });
    // What a reader's open() resolves `token` to before the swap: the file in the current folder.
    const resolved = join(dir, readlinkSync(join(dir, DATA_DIR)), 'token');
    writeAtomically(dir, { token: f('t2') });
    expect(readFileSync(join(dir, 'token'), 'utf8')).toBe('t2');
    expect(readFileSync(resolved, 'utf8')).toBe('t1'); // Kubernetes' writer has removed it by now
    writeAtomically(dir, { token: f('t3') });
    expect(() => readFileSync(resolved)).toThrow(/ENOENT/);
  });

  it('writes nothing when the content is what the current version has', () => {
    const dir = tempDir('gwlab-aw-');
    writeAtomically(dir, { token: f('t1'), ca: f('c') });
    const first = readlinkSync(join(dir, DATA_DIR));
    expect(writeAtomically(dir, { token: f('t1'), ca: f('c') })).toBe(false);
    expect(readlinkSync(join(dir, DATA_DIR))).toBe(first);
    // Bytes compare as bytes.
    expect(writeAtomically(dir, { token: { data: Buffer.from('t1'), mode: 0o644 }, ca: f('c') })).toBe(false);
  });

  it('refuses paths Kubernetes refuses, naming the path', () => {
    expect(() => validatePayload({ '/abs': f('x') })).toThrow('invalid path: must be relative path: /abs');
    expect(() => validatePayload({ 'a/../b': f('x') })).toThrow("invalid path: must not contain '..': a/../b");
    expect(() => validatePayload({ '..data': f('x') })).toThrow("invalid path: must not start with '..': ..data");
    expect(() => validatePayload({ '': f('x') })).toThrow(PayloadError);
    expect(() => validatePayload({ ['x'.repeat(256)]: f('x') })).toThrow('filenames must be less than or equal to 255');
    expect([...validatePayload({ 'a//b/./c': f('x') }).keys()]).toEqual(['a/b/c']);
    const dir = tempDir('gwlab-aw-');
    expect(() => writeAtomically(dir, { '../escape': f('x') })).toThrow(PayloadError);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('a reader polling the file while it is replaced 150 times never finds it missing or partial', async () => {
    const dir = tempDir('gwlab-aw-');
    const content = (i: number) => `${i}:`.padEnd(64 * 1024, String(i % 10));
    writeAtomically(dir, { token: f(content(0)) });
    // The reader runs on its own thread, so its reads really interleave with the writes.
    const reader = new Worker(
      `const { readFileSync } = require('node:fs');
       const { parentPort, workerData } = require('node:worker_threads');
       let stop = false, reads = 0; const bad = [];
       parentPort.on('message', () => { stop = true; });
       (function loop() {
         for (let i = 0; i < 50; i++) {
           try {
             const s = readFileSync(workerData, 'utf8');
             const n = s.slice(0, s.indexOf(':'));
             if (s.length !== 65536 || s.at(-1) !== String(Number(n) % 10)) bad.push('partial ' + s.length);
             reads++;
           } catch (e) { bad.push(e.code); }
         }
         if (stop) parentPort.postMessage({ reads, bad: bad.slice(0, 5), badCount: bad.length });
         else setImmediate(loop);
       })();`,
      { eval: true, workerData: join(dir, 'token') },
    );
    try {
      for (let i = 1; i <= 150; i++) {
        writeAtomically(dir, { token: f(content(i)) });
        // Paced, though far faster than the kubelet's renewals (seconds apart): a reader preempted for longer than
        // two writes could still miss the folder it resolved, which no real reader is.
        await new Promise((r) => setTimeout(r, 10));
      }
      const done = new Promise<{ reads: number; bad: string[]; badCount: number }>((r) => reader.once('message', r));
      reader.postMessage('stop');
      const r = await done;
      expect(r.reads).toBeGreaterThan(0);
      expect(r.badCount, r.bad.join(', ')).toBe(0);
      expect(readFileSync(join(dir, 'token'), 'utf8')).toBe(content(150));
    } finally {
      await reader.terminate();
    }
  });
});
