// Which dependencies may run install scripts during `npm ci` (package.json "allowScripts", npm's install-script
// policy, RFC npm/rfcs#868): every package of the lockfile that has one is decided there, so no new dependency's
// script runs unreviewed and `npm ci` prints no install-scripts warning. Allowed: `node` (its postinstall installs
// the Node binary the npm scripts run on). Denied: ssh2 and cpu-features (two node-gyp C++ builds, ~2 s of CPU and
// ~2.5 s of a clean-clone `npm ci`, for a native crypto binding of ssh2, which testcontainers loads only for Docker
// hosts reached over ssh and which falls back to JavaScript without it) and protobufjs (a version-scheme warning).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../lab/install.ts';

const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8'));
const lock = JSON.parse(readFileSync(join(REPO_ROOT, 'package-lock.json'), 'utf8'));

/** The name of a lockfile entry: `node_modules/@a/b` or `node_modules/x/node_modules/@a/b` → `@a/b`. */
const nameOf = (path: string) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);

describe('install scripts (package.json allowScripts)', () => {
  const withScripts = Object.entries(lock.packages as Record<string, { hasInstallScript?: boolean }>)
    .filter(([path, p]) => path !== '' && p.hasInstallScript)
    .map(([path]) => nameOf(path));

  it('decides every dependency that has an install script', () => {
    expect(withScripts.length).toBeGreaterThan(0);
    const undecided = withScripts.filter((name) => typeof pkg.allowScripts?.[name] !== 'boolean');
    expect(undecided, 'add each to package.json "allowScripts": true to run its script, false to skip it').toEqual([]);
  });

  it('lists no package the lockfile does not have (a removed dependency leaves no stale entry)', () => {
    const stale = Object.keys(pkg.allowScripts ?? {}).filter((name) => !withScripts.includes(name));
    expect(stale).toEqual([]);
  });

  it('runs only the Node package’s script', () => {
    const allowed = Object.entries(pkg.allowScripts as Record<string, boolean>).filter(([, v]) => v);
    expect(allowed.map(([k]) => k)).toEqual(['node']);
  });
});
