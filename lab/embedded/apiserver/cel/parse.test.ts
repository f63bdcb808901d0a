// parse.ts: one parsed tree per expression text, shared by every rule with that text; a rule that does not parse
// throws every time, with parse's message. With a compile cache, the trees outlive the process: another process
// reads them from the file instead of parsing (shown with a doctored file: the tree stored for a text is served).
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { deserialize, serialize } from 'node:v8';
import { parse } from '@bufbuild/cel';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../../testing/tmp.ts';
import { parseCel } from './parse.ts';

/** Runs `program` (an ES module; parseCel imported) in a process whose compile cache is `dir`; its stdout as JSON. */
function inProcess(dir: string, program: string): unknown {
  const src = `import { parseCel } from ${JSON.stringify(join(import.meta.dirname, 'parse.ts'))};\n${program}`;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', src], {
    env: { ...process.env, NODE_COMPILE_CACHE: dir },
    encoding: 'utf8',
  });
  return JSON.parse(out);
}

function cacheFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.split('/').pop()!.startsWith('cel-parsed-'))
    .map((f) => join(dir, f));
}

describe('parseCel', () => {
  it('returns the tree parse returns, the same object for the same text', () => {
    const text = "self.all(r, r.name != '' && size(r.name) <= 63)";
    const a = parseCel(text);
    expect(a).toEqual(parse(text));
    expect(parseCel(text)).toBe(a);
    expect(parseCel(`${text} `)).not.toBe(a);
  });

  it('throws for a text that does not parse, each time', () => {
    expect(() => parseCel('self.x ==')).toThrow(/<input>:1:8: found = but expecting/);
    expect(() => parseCel('self.x ==')).toThrow(/<input>:1:8: found = but expecting/);
  });

  it('keeps the trees on disk beside the compile cache; another process is served from there', () => {
    const dir = tempDir('gwlab-celcache-');
    const text = 'self.a == 1';
    expect(inProcess(dir, `parseCel(${JSON.stringify(text)}); console.log('1');`)).toBe(1);
    const [file] = cacheFiles(dir);
    expect(file).toBeDefined();
    const stored = new Map(deserialize(readFileSync(file!)) as [string, unknown][]);
    expect(stored.get(text)).toEqual(parse(text));
    // Doctored: the tree of another text under this one. A process that reads the file returns it.
    writeFileSync(file!, serialize([[text, parse('self.b == 2')]]));
    const served = inProcess(
      dir,
      `console.log(JSON.stringify(parseCel(${JSON.stringify(text)}).expr, (k, v) => typeof v === 'bigint' ? String(v) : v));`,
    );
    expect(JSON.stringify(served)).toContain('"b"');
    expect(JSON.stringify(served)).not.toContain('"a"');
  });
});
