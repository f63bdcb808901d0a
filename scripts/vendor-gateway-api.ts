// `npm run vendor:gateway-api -- --tag v1.6.1 [--repo <git dir | URL>]`: vendors a Gateway API release unchanged.
// The install bundles are built from the tag's config/crd/<channel>/gateway*.yaml exactly as upstream's
// hack/build-install-yaml.sh builds the release assets standard-install.yaml and experimental-install.yaml (boilerplate,
// channel banner, then each file behind a `---` and its path), so they are byte for byte what a user downloads. The
// upstream corpora the tests read (examples/, hack/invalid-examples/, conformance/base and conformance/tests/*.yaml,
// conformance/utils' echo-basic is not needed) go to tests/upstream/gateway-api/. The tag, its commit and the LICENSE
// are recorded next to the bundles, with each bundle's sha256 (crds.test.ts checks the files still have it), and each
// bundle's documents are written beside it as JSON (`<channel>-install.json`): the lab installs from that form, which
// loads in ~10 ms where parsing the YAML takes ~300 ms (system/manifests/gateway-api.ts). The repository is read with
// git (no work tree needed): a local clone or mirror, or a URL that is cloned bare into a temporary folder first.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import minimist from 'minimist';
import { parseYamlDocs } from '../lab/toolkit/kube.ts';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
export const BUNDLE_DIR = join(ROOT, 'system', 'manifests', 'gateway-api');
export const CORPUS_DIR = join(ROOT, 'tests', 'upstream', 'gateway-api');
const DEFAULT_REPO = 'https://github.com/kubernetes-sigs/gateway-api.git';
/** Upstream folders copied for the tests (prefix match on the path at the tag). */
const CORPORA = ['examples/', 'hack/invalid-examples/', 'conformance/base/', 'conformance/tests/'];

function git(gitDir: string, args: string[]): Buffer {
  return execFileSync('git', ['--git-dir', gitDir, ...args], { maxBuffer: 256 << 20 });
}

/** hack/build-install-yaml.sh for one channel, from the tag's files. */
export function buildBundle(gitDir: string, tag: string, channel: 'standard' | 'experimental'): string {
  const files = git(gitDir, ['ls-tree', '--name-only', `${tag}:config/crd/${channel}`])
    .toString()
    .split('\n')
    .filter((f) => f.startsWith('gateway') && f.endsWith('.yaml'))
    .sort(); // the shell glob's order (C locale for these ASCII names)
  const title = channel[0].toUpperCase() + channel.slice(1);
  let out = git(gitDir, ['show', `${tag}:hack/boilerplate/boilerplate.sh.txt`]).toString();
  out += `#\n# Gateway API ${title} channel install\n#\n`;
  for (const f of files) {
    const path = `config/crd/${channel}/${f}`;
    out += `---\n#\n# ${path}\n#\n`;
    out += git(gitDir, ['show', `${tag}:${path}`]).toString();
  }
  return out;
}

/** The JSON form of a bundle: its documents as the lab parses YAML (lab/toolkit/kube.ts parseYamlDocs). */
export function bundleJson(yamlText: string): string {
  return `${JSON.stringify(parseYamlDocs(yamlText))}\n`;
}

export const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');

function copyCorpora(gitDir: string, tag: string): number {
  rmSync(CORPUS_DIR, { recursive: true, force: true });
  const paths = git(gitDir, ['ls-tree', '-r', '--name-only', tag])
    .toString()
    .split('\n')
    .filter((p) => CORPORA.some((c) => p.startsWith(c)))
    .filter((p) => !p.startsWith('conformance/tests/') || p.endsWith('.yaml'));
  for (const p of paths) {
    const dest = join(CORPUS_DIR, p);
    mkdirSync(dirname(dest), { recursive: true });
    writeFileSync(dest, git(gitDir, ['show', `${tag}:${p}`]));
  }
  writeFileSync(join(CORPUS_DIR, 'LICENSE'), git(gitDir, ['show', `${tag}:LICENSE`]));
  return paths.length;
}

function main(): void {
  const args = minimist(process.argv.slice(2), { string: ['tag', 'repo'] });
  const tag = args.tag as string | undefined;
  if (!tag || !/^v\d+\.\d+\.\d+(-[\w.]+)?$/.test(tag)) {
    throw new Error('--tag is required and must be a release tag such as v1.6.1');
  }
  const repo = (args.repo as string | undefined) ?? DEFAULT_REPO;
  let gitDir = repo;
  let tmp: string | undefined;
  if (/^(https?|git|ssh):\/\//.test(repo)) {
    tmp = mkdtempSync(join(tmpdir(), 'gwlab-vendor-'));
    gitDir = join(tmp, 'repo.git');
    execFileSync('git', ['clone', '--bare', '--depth', '1', '--branch', tag, repo, gitDir], { stdio: 'inherit' });
  }
  try {
    const commit = git(gitDir, ['rev-parse', `${tag}^{commit}`])
      .toString()
      .trim();
    mkdirSync(BUNDLE_DIR, { recursive: true });
    const sums: string[] = [];
    for (const channel of ['standard', 'experimental'] as const) {
      const yaml = buildBundle(gitDir, tag, channel);
      writeFileSync(join(BUNDLE_DIR, `${channel}-install.yaml`), yaml);
      writeFileSync(join(BUNDLE_DIR, `${channel}-install.json`), bundleJson(yaml));
      sums.push(`sha256 ${channel}-install.yaml: ${sha256(yaml)}\n`);
    }
    writeFileSync(join(BUNDLE_DIR, 'LICENSE'), git(gitDir, ['show', `${tag}:LICENSE`]));
    writeFileSync(
      join(BUNDLE_DIR, 'UPSTREAM'),
      `repository: ${DEFAULT_REPO}\ntag: ${tag}\ncommit: ${commit}\n` +
        'files: standard-install.yaml and experimental-install.yaml as hack/build-install-yaml.sh builds them, unchanged\n' +
        sums.join('') +
        'json: <channel>-install.json, the same documents parsed (what the lab reads)\n' +
        `re-vendor: npm run vendor:gateway-api -- --tag <tag> [--repo <git dir | URL>]\n`,
    );
    const n = copyCorpora(gitDir, tag);
    process.stdout.write(`vendored Gateway API ${tag} (${commit}): 2 bundles, ${n} corpus files\n`);
  } finally {
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  try {
    main();
  } catch (e) {
    process.stderr.write(`vendor:gateway-api: ${(e as Error).message}\n`);
    process.exit(1);
  }
}
