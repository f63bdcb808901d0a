// http-exports.ts: after deferHttpUndiciExports(), an ES module import of node:http does not load Node's internal
// undici (process.moduleLoadList names every internal module loaded), and http.WebSocket still works; without it the
// same import loads undici (the cost being avoided). Each case in a fresh process: a module loads once per process.
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

const PROGRAM = (defer: boolean) => `
${defer ? "const { deferHttpUndiciExports } = await import('./system/shared/http-exports.ts'); deferHttpUndiciExports();" : ''}
const http = await import('node:http');
const before = process.moduleLoadList.some((m) => m.includes('deps/undici'));
const ws = typeof http.default.WebSocket;
console.log(JSON.stringify({ before, ws, after: process.moduleLoadList.some((m) => m.includes('deps/undici')) }));`;

const run = (defer: boolean) =>
  JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', PROGRAM(defer)], { encoding: 'utf8' }));

describe('deferHttpUndiciExports', () => {
  it("keeps node:http's import from loading Node's undici; http.WebSocket loads it when read", () => {
    expect(run(false)).toEqual({ before: true, ws: 'function', after: true });
    expect(run(true)).toEqual({ before: false, ws: 'function', after: true });
  });
});
