import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { containerArgv, ImageCatalog, ImagePullError, normalizeImageRef, parseImagesYaml } from './images.ts';

const home = mkdtempSync(join(tmpdir(), 'gwlab-images-'));
afterAll(() => rmSync(home, { recursive: true, force: true }));

describe('image catalog', () => {
  const catalog = new ImageCatalog({
    home,
    builtins: { 'gwlab.local/system:0.1.0': { command: ['node', '/repo/system/main.ts'] } },
  });

  it('resolves builtins and user entries from images.yaml, re-reading the file when it changes', () => {
    expect(catalog.resolve('gwlab.local/system:0.1.0').command).toEqual(['node', '/repo/system/main.ts']);
    expect(() => catalog.resolve('example.com/echo:1.0')).toThrow(ImagePullError);
    writeFileSync(
      join(home, 'images.yaml'),
      'images:\n  "example.com/echo:1.0":\n    command: [node, /srv/echo.js]\n    args: [--port, "8080"]\n  busybox: [/bin/sh]\n',
    );
    expect(catalog.resolve('example.com/echo:1.0')).toMatchObject({
      command: ['node', '/srv/echo.js'],
      args: ['--port', '8080'],
    });
    expect(catalog.resolve('busybox:latest').command).toEqual(['/bin/sh']);
    expect(catalog.resolve('busybox').command).toEqual(['/bin/sh']);
  });

  it('gives ErrImagePull naming the catalog file for unknown images', () => {
    let err: unknown;
    try {
      catalog.resolve('example.com/unknown:2');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ImagePullError);
    expect(err).toMatchObject({ reason: 'ErrImagePull', image: 'example.com/unknown:2' });
    expect((err as Error).message).toContain(join(home, 'images.yaml'));
  });

  it('rejects malformed entries with the field and the fix', () => {
    expect(() => parseImagesYaml('images:\n  a:1: {command: node}\n', 'f.yaml')).toThrow(
      'f.yaml: images["a:1"].command: must be a list of strings',
    );
    expect(() => parseImagesYaml('images:\n  a:1: {cmd: [x]}\n', 'f.yaml')).toThrow('images["a:1"].cmd: unknown field');
    expect(() => parseImagesYaml('- a\n', 'f.yaml')).toThrow('expected a top-level "images:" map');
  });

  it('normalizes references', () => {
    expect(normalizeImageRef('nginx')).toBe('nginx:latest');
    expect(normalizeImageRef('localhost:5000/app')).toBe('localhost:5000/app:latest');
    expect(normalizeImageRef('localhost:5000/app:1')).toBe('localhost:5000/app:1');
  });

  it('computes argv as a container runtime does', () => {
    const entry = { command: ['node', 'main.ts'], args: ['default'] };
    expect(containerArgv(entry, {}, {})).toEqual(['node', 'main.ts', 'default']);
    expect(containerArgv(entry, { args: ['proxy', '--id', '$(POD_NAME)'] }, { POD_NAME: 'p1' })).toEqual([
      'node',
      'main.ts',
      'proxy',
      '--id',
      'p1',
    ]);
    expect(containerArgv(entry, { command: ['sh', '-c'] }, {})).toEqual(['sh', '-c']);
    expect(containerArgv(entry, { command: ['sh'], args: ['-c', 'echo $(A)'] }, { A: '1' })).toEqual([
      'sh',
      '-c',
      'echo 1',
    ]);
  });
});
