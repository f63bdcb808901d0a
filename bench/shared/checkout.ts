// The other checkout of a `--vs <checkout>` comparison (bench:controlplane, bench:proxy): checked to hold what the
// bench runs from it and its dependencies, and named by its commit in the report, as this one is.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { repoRoot } from './paths.ts';

export interface Versus {
  /** The other checkout's absolute path. */
  other: string;
  /** The two as the report names them: `this (<commit>)`, `other (<commit>)`. */
  names: { self: string; other: string };
}

/** The checkout's short commit (`?` outside git). */
function commitOf(root: string): string {
  try {
    return execFileSync('git', ['-C', root, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
  } catch {
    return '?';
  }
}

/** `dir` as the other side of a comparison; `needs`: the file the bench runs from it (relative to its root). */
export function versusCheckout(dir: string, needs: string): Versus {
  const other = resolve(dir);
  if (!existsSync(join(other, needs)) || !existsSync(join(other, 'node_modules'))) {
    throw new Error(
      `--vs ${dir}: not a checkout with its dependencies (want ${needs} and node_modules/); make one with ` +
        '`git worktree add <dir> <commit> && (cd <dir> && npm ci)`',
    );
  }
  return { other, names: { self: `this (${commitOf(repoRoot)})`, other: `other (${commitOf(other)})` } };
}
