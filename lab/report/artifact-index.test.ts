// artifacts/index.json under concurrent writers: scenario files run side by side in separate processes, and each
// records its failures in the run's one index. Four processes recording 40 names each at once must leave all 160 (a
// bare read-modify-rename, as before the scenarios ran in parallel, loses some when two read the same old index).
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { recordArtifacts } from './artifact-index.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'gwlab-artifact-index-'));
  dirs.push(d);
  return d;
}

/** A process that records `count` names `<who>-<i>`, one update at a time, into `root`'s index. */
function writer(root: string, who: string, count: number): Promise<void> {
  const module = pathToFileURL(join(import.meta.dirname, 'artifact-index.ts')).href;
  const code = `import { recordArtifacts } from ${JSON.stringify(module)};
for (let i = 0; i < ${count}; i++) await recordArtifacts(${JSON.stringify(root)}, [${JSON.stringify(who)} + '-' + i], 'artifacts/' + ${JSON.stringify(who)});`;
  return new Promise((resolve, reject) =>
    execFile(process.execPath, ['--input-type=module', '-e', code], { timeout: 60_000 }, (err, _out, stderr) =>
      err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(),
    ),
  );
}

describe('artifacts/index.json', () => {
  it('keeps every entry when several processes record at once', async () => {
    const root = tempDir();
    const who = ['a', 'b', 'c', 'd'];
    await Promise.all(who.map((w) => writer(root, w, 40)));
    const index = JSON.parse(readFileSync(join(root, 'index.json'), 'utf8'));
    expect(Object.keys(index).length).toBe(160);
    for (const w of who) expect(index[`${w}-39`]).toBe(`artifacts/${w}`);
    expect(existsSync(join(root, 'index.json.lock'))).toBe(false);
  }, 90_000);

  it('adds to what is there, and takes over a lock left by a killed process once it is stale', async () => {
    const root = tempDir();
    await recordArtifacts(root, ['first'], 'artifacts/one');
    writeFileSync(join(root, 'index.json.lock'), '');
    const old = new Date(Date.now() - 60_000);
    utimesSync(join(root, 'index.json.lock'), old, old);
    await recordArtifacts(root, ['second', 'third'], 'artifacts/two');
    expect(JSON.parse(readFileSync(join(root, 'index.json'), 'utf8'))).toEqual({
      first: 'artifacts/one',
      second: 'artifacts/two',
      third: 'artifacts/two',
    });
  });
});
