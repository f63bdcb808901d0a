// Headless Chromium for the browser tests, from npm alone: the Chromium build shipped inside @sparticuz/chromium
// (bin/chromium.br, brotli-compressed; no install script, no download at run time), driven by playwright-core.
// The package's own executablePath() inflates to a fixed /tmp/chromium and returns whatever file has that name, even
// one another process is still writing or one of another version; here the binary is inflated once per package
// version into node_modules/.cache (the os temp folder if that is read-only) and renamed into place, so concurrent
// runs see either no file or the whole one. The flags are those a closed network needs (no sandbox as root, no GPU,
// no background, component-update, sync or first-run traffic), with a fresh profile (user data dir) per launch.
import {
  createReadStream,
  createWriteStream,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createBrotliDecompress } from 'node:zlib';
import { type BrowserContext, chromium } from 'playwright-core';

export const CHROMIUM_FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

/** The package's folder (node_modules/@sparticuz/chromium) and version. */
function chromiumPackage(): { dir: string; version: string } {
  const entry = createRequire(import.meta.url).resolve('@sparticuz/chromium');
  const dir = join(dirname(entry), '..');
  const { version } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version: string };
  return { dir, version };
}

function cacheDir(pkgDir: string, version: string): string {
  const name = `gwlab-chromium-${version}`;
  const inModules = join(pkgDir, '..', '..', '.cache', name);
  try {
    mkdirSync(inModules, { recursive: true });
    return inModules;
  } catch {
    const inTmp = join(tmpdir(), name);
    mkdirSync(inTmp, { recursive: true });
    return inTmp;
  }
}

/** Path of the Chromium executable, inflated from the package on first use. */
export async function chromiumExecutable(): Promise<string> {
  const pkg = chromiumPackage();
  const exe = join(cacheDir(pkg.dir, pkg.version), 'chromium');
  if (existsSync(exe)) return exe;
  const part = `${exe}.${process.pid}.part`;
  try {
    await pipeline(
      createReadStream(join(pkg.dir, 'bin', 'chromium.br')),
      createBrotliDecompress(),
      createWriteStream(part, { mode: 0o755 }),
    );
    renameSync(part, exe);
  } finally {
    rmSync(part, { force: true });
  }
  return exe;
}

export interface HeadlessBrowser {
  context: BrowserContext;
  /** Closes the browser (its processes end) and removes the profile. */
  close(): Promise<void>;
}

/** Launches headless Chromium with a fresh profile; downloads allowed (pprof links download files). */
export async function launchHeadlessChromium(): Promise<HeadlessBrowser> {
  const executablePath = await chromiumExecutable();
  const profile = mkdtempSync(join(tmpdir(), 'gwlab-chromium-profile-'));
  let context: BrowserContext;
  try {
    context = await chromium.launchPersistentContext(profile, {
      executablePath,
      headless: true,
      acceptDownloads: true,
      args: CHROMIUM_FLAGS,
    });
  } catch (err) {
    rmSync(profile, { recursive: true, force: true });
    throw err;
  }
  return {
    context,
    close: async () => {
      try {
        await context.close();
      } finally {
        rmSync(profile, { recursive: true, force: true });
      }
    },
  };
}
