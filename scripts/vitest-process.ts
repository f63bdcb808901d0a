// The project's own vitest started as a child of a script (`npm test`, `npm run conformance`): node_modules'
// vitest.mjs run by this Node, from the checkout's root, `vitest run` and the script's arguments. Its exit code is
// what the script passes on; one stopped by a signal counts as failed.
import { type ChildProcess, type SpawnOptions, spawn } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

export interface VitestProcess {
  child: ChildProcess;
  /** Resolves when it has exited and its output is read, with its exit code (1 when a signal stopped it). */
  exited: Promise<number>;
}

export function spawnVitest(args: string[], options: Omit<SpawnOptions, 'cwd'>): VitestProcess {
  const child = spawn(process.execPath, [join(root, 'node_modules', 'vitest', 'vitest.mjs'), 'run', ...args], {
    ...options,
    cwd: root,
  });
  const exited = new Promise<number>((done) => child.on('close', (code, sig) => done(code ?? (sig ? 1 : 0))));
  return { child, exited };
}
