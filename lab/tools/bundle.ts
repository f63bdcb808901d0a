// The core of `npm run lab:bundle`: everything a bug report needs in one .tar.gz — collect() over the namespaces that
// hold gateway resources (with previous logs and each proxy's full admin output), the cluster's own information, and
// index.md on top saying what is where and how each collector went. A failing collector is noted and the bundle still
// completes. Only reads and port-forwards: nothing in the cluster is changed.
import { mkdtemp, rename, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { create } from 'tar';
import type { Progress } from '../progress.ts';
import type { LabRecord } from '../state.ts';
import type { Kube } from '../toolkit/kube.ts';
import { clusterInfoCollector } from './bundle/cluster-info.ts';
import { renderIndexMd } from './bundle/index-md.ts';
import { bundleNamespaces } from './bundle/namespaces.ts';
import { type CollectIndex, type Collector, collect, INDEX_FILE } from './collect.ts';

export interface BundleOptions {
  /** The lab's name, for the default file name and index.md. */
  lab: string;
  /** Archive path; default `gwlab-bundle-<lab>-<timestamp>.tar.gz` in the current directory. */
  out?: string;
  context?: string;
  rec?: LabRecord;
  progress?: Progress;
  collectorTimeoutMs?: number;
}

export interface BundleResult {
  path: string;
  bytes: number;
  namespaces: string[];
  index: CollectIndex;
  /** Files collected (index.md and index.json aside); 0 means the cluster gave nothing. */
  collected: number;
}

/** `20250102T030405Z`: sortable, and safe in a file name on every system. */
export function stamp(d: Date): string {
  return d
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
}

export function defaultBundleName(lab: string, at: Date): string {
  const safe =
    lab
      .toLowerCase()
      .replace(/[^a-z0-9-]+/g, '-')
      .replace(/^-+|-+$/g, '') || 'cluster';
  return `gwlab-bundle-${safe}-${stamp(at)}.tar.gz`;
}

async function step<T>(p: Progress | undefined, name: string, fn: () => Promise<T>, hint?: string): Promise<T> {
  return p ? p.step(name, fn, { hint }) : fn();
}

export async function bundle(kube: Kube, opts: BundleOptions): Promise<BundleResult> {
  const created = new Date();
  const path = resolve(opts.out ?? defaultBundleName(opts.lab, created));
  const top = basename(path).replace(/\.tar\.gz$|\.tgz$/, '') || 'gwlab-bundle';
  const staging = await mkdtemp(join(tmpdir(), 'gwlab-bundle-'));
  try {
    const dir = join(staging, top);
    const sel = await step(opts.progress, 'find the namespaces of gateway resources', () => bundleNamespaces(kube));
    const selection: Collector = {
      name: 'namespaces',
      what: 'the namespaces to collect: those holding Gateway API or gwvendor resources, those they refer to, gwvendor-system',
      run: async () => ({ notes: [sel.namespaces.join(', ')], errors: sel.errors }),
    };
    const index = await step(opts.progress, `collect ${sel.namespaces.length} namespaces`, () =>
      collect(kube, dir, {
        namespaces: sel.namespaces,
        previousLogs: true,
        extended: true,
        extra: [clusterInfoCollector(opts.rec), selection],
        collectorTimeoutMs: opts.collectorTimeoutMs,
      }),
    );
    const md = renderIndexMd(
      {
        lab: opts.lab,
        context: opts.context,
        server: kube.kc.getCurrentCluster()?.server,
        created: created.toISOString(),
        namespaces: sel.namespaces,
      },
      index,
    );
    await writeFile(join(dir, 'index.md'), md);
    const collected = index.collectors.flatMap((c) => c.files);
    await step(
      opts.progress,
      `write ${path}`,
      async () => {
        // Written beside and renamed, so the path never holds half an archive. index.md is the archive's first entry.
        const tmp = `${path}.${process.pid}.partial`;
        try {
          await create({ gzip: true, file: tmp, cwd: staging, portable: true }, [
            `${top}/index.md`,
            `${top}/${INDEX_FILE}`,
            ...[...collected].sort().map((f) => `${top}/${f}`),
          ]);
          await rename(tmp, path);
        } catch (err) {
          await rm(tmp, { force: true });
          throw err;
        }
      },
      'pick a writable path with -o <file>',
    );
    return { path, bytes: (await stat(path)).size, namespaces: sel.namespaces, index, collected: collected.length };
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}
