// Container logs in the kubelet's CRI format: parsing, the pods/log options, writing, following, and rotation.
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { ContainerLogWriter, followLog, newInstanceLog, parseRecord, readLog, rotatedLogs } from './logs.ts';

const dir = mkdtempSync(join(tmpdir(), 'gwlab-logs-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const FIXTURE = [
  '2025-01-01T00:00:01.000000000Z stdout F one',
  '2025-01-01T00:00:02.000000000Z stderr F two',
  '2025-01-01T00:00:03.000000000Z stdout P thr',
  '2025-01-01T00:00:03.100000000Z stdout F ee',
  '2025-01-01T00:00:04.000000000Z stdout F four',
  '',
].join('\n');

describe('container logs', () => {
  const file = join(dir, 'fixture.log');
  writeFileSync(file, FIXTURE);

  it('parses CRI records', () => {
    expect(parseRecord('2025-01-01T00:00:03.000000000Z stdout P a b ')).toEqual({
      time: '2025-01-01T00:00:03.000000000Z',
      stream: 'stdout',
      partial: true,
      text: 'a b ',
    });
  });

  it('renders with timestamps, tailLines, sinceTime and limitBytes', () => {
    expect(readLog(file)).toBe('one\ntwo\nthree\nfour\n');
    expect(readLog(file, { tailLines: 2 })).toBe('three\nfour\n');
    expect(readLog(file, { tailLines: 0 })).toBe('');
    expect(readLog(file, { sinceTime: '2025-01-01T00:00:02Z' })).toBe('two\nthree\nfour\n');
    expect(readLog(file, { limitBytes: 6 })).toBe('one\ntw');
    expect(readLog(file, { timestamps: true, tailLines: 1 })).toBe('2025-01-01T00:00:04.000000000Z four\n');
  });

  it('writes lines with timestamps, partial lines as P records, the rest at close', async () => {
    const out = join(dir, 'w.log');
    const w = new ContainerLogWriter(out);
    const so = new PassThrough();
    const se = new PassThrough();
    w.attach(so, 'stdout');
    w.attach(se, 'stderr');
    so.write('hello\nwor');
    se.write('err line\n');
    so.write('ld\nno newline');
    so.end();
    se.end();
    await w.close();
    expect(readLog(out)).toBe('hello\nerr line\nworld\nno newline\n');
  });

  it('follows a file until the instance is done', async () => {
    const out = join(dir, 'f.log');
    const w = new ContainerLogWriter(out);
    w.write('stdout', 'first\n');
    await new Promise((r) => setTimeout(r, 50));
    let done = false;
    const got: string[] = [];
    const reader = (async () => {
      for await (const chunk of followLog(out, { tailLines: 1 }, () => done)) got.push(chunk);
    })();
    await new Promise((r) => setTimeout(r, 100));
    w.write('stdout', 'second\n');
    await new Promise((r) => setTimeout(r, 100));
    w.write('stdout', 'third\n');
    await w.close();
    done = true;
    await reader;
    expect(got.join('')).toBe('first\nsecond\nthird\n');
  });

  it('rotates a file past its size as the kubelet does, keeps maxFiles, and a follower reads on across rotations', async () => {
    const out = join(dir, 'r', '0.log');
    mkdirSync(join(dir, 'r'), { recursive: true });
    const w = new ContainerLogWriter(out, { maxBytes: 1000, maxFiles: 3 });
    const lines = Array.from({ length: 60 }, (_, i) => `line ${String(i).padStart(2, '0')} ${'x'.repeat(40)}`);
    // kubectl logs -f on a running container: the file is there.
    w.write('stdout', `${lines[0]}\n`);
    await new Promise((r) => setTimeout(r, 50));
    let done = false;
    const got: string[] = [];
    const reader = (async () => {
      for await (const chunk of followLog(out, {}, () => done)) got.push(chunk);
    })();
    for (const l of lines.slice(1)) {
      w.write('stdout', `${l}\n`);
      await new Promise((r) => setTimeout(r, 5));
    }
    await w.close();
    done = true;
    await reader;
    // Every line once, in order, although the file was replaced five times under the follower.
    expect(got.join('')).toBe(lines.map((l) => `${l}\n`).join(''));
    expect(rotatedLogs(out)).toHaveLength(2);
    expect(statSync(out).size).toBeLessThanOrEqual(1000);
    // kubectl logs reads the current file: the newest lines only.
    const current = readLog(out);
    expect(current.endsWith(`${lines[59]}\n`)).toBe(true);
    expect(current).not.toContain(lines[0]);
    // A new instance's log removes the older instances' files, rotated ones included.
    newInstanceLog(join(dir, 'r'), 1);
    newInstanceLog(join(dir, 'r'), 2);
    expect(readdirSync(join(dir, 'r')).sort()).toEqual([]);
  });
});
