// npm run lab:bundle -- [-o <file>] [--kubeconfig <f> | --name <lab>] [--context <c>]
// One .tar.gz with everything a bug report needs (lab/tools/bundle.ts): cluster information, the gateway resources with
// their statuses, events, logs, the control plane's snapshots and each proxy's admin output, with index.md on top.
// Reads and port-forwards only; Secret values redacted.
import { formatMs, Progress } from '../lab/progress.ts';
import { bundle } from '../lab/tools/bundle.ts';
import { CLUSTER_USAGE, openLab, parseFlags, run } from './cli.ts';

const USAGE = `usage: npm run lab:bundle -- [-o <file>] [--kubeconfig <f> | --name <lab>] [--context <c>]
  -o, --output <file>   where to write the archive (default: ./gwlab-bundle-<lab or context>-<timestamp>.tar.gz)
${CLUSTER_USAGE}

The archive holds index.md (what is where, each collector's status), cluster/ (version, nodes, CRDs), resources/,
events/, logs/, controlplane/ (/snapshots/krt, /snapshots/xds, /metrics) and proxies/ (config_dump, listeners,
clusters, stats, server_info). It makes no change to the cluster, and Secret values are replaced by <redacted>.`;

function size(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1 << 20) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / (1 << 20)).toFixed(1)} MiB`;
}

await run(async () => {
  const flags = parseFlags({ string: ['output'], alias: { o: 'output' } });
  if (flags.args.help) {
    console.log(USAGE);
    return;
  }
  const target = openLab(flags);
  const lab = target.rec?.name ?? target.context;
  const progress = new Progress();
  const r = await bundle(target.kube, {
    lab,
    out: flags.args.output as string | undefined,
    context: target.context,
    rec: target.rec,
    progress,
  });
  console.log(`\n${r.path} (${size(r.bytes)}, ${formatMs(progress.totalMs())})`);
  console.log(`namespaces: ${r.namespaces.join(', ')}`);
  for (const c of r.index.collectors) {
    const why = c.status === 'failed' ? c.error : c.status === 'skipped' ? c.reason : undefined;
    console.log(
      `  ${c.status.padEnd(7)} ${c.name} (${c.files.length} files, ${formatMs(c.ms)})${why ? `: ${why.split('\n')[0]}` : ''}`,
    );
  }
  const failed = r.index.collectors.filter((c) => c.status === 'failed').length;
  if (!r.collected) {
    throw new Error(
      `nothing could be collected from the cluster (see index.md in ${r.path}); check that it answers: ` +
        `${target.kubectl} get --raw /version`,
    );
  }
  if (failed) console.log(`${failed} collectors failed: the bundle holds the rest; index.md says what is missing.`);
});
