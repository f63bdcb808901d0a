// The lab process: `node lab/embedded/main.ts --name <lab> [--home <dir>] [--force-lb-fallback]`. It runs the embedded
// cluster until SIGTERM/SIGINT, then stops every pod and exits. `npm run lab:up` starts it in the background.
import { parseArgs } from 'node:util';
import { parseLevel } from '../../system/shared/log.ts';
import { startEmbeddedCluster } from './cluster.ts';

const { values } = parseArgs({
  options: {
    name: { type: 'string', default: 'gwlab' },
    home: { type: 'string' },
    'log-level': { type: 'string', default: 'info' },
    'force-lb-fallback': { type: 'boolean', default: false },
    'lb-delay-ms': { type: 'string' },
  },
  strict: true,
});

const level = parseLevel(values['log-level']!);
if (!level) {
  console.error(
    `--log-level: unknown level ${JSON.stringify(values['log-level'])}; use trace, debug, info, warn or error`,
  );
  process.exit(2);
}
if (values.home) process.env.GWLAB_HOME = values.home;

try {
  const cluster = await startEmbeddedCluster({
    name: values.name!,
    home: values.home,
    logLevel: level,
    forceLbPortFallback: values['force-lb-fallback'],
    lbProvisionDelayMs: values['lb-delay-ms'] ? Number(values['lb-delay-ms']) : undefined,
  });
  // The parent (lab:up) waits for this line on stdout.
  process.stdout.write(JSON.stringify({ ready: true, kubeconfig: cluster.kubeconfigPath, pid: process.pid }) + '\n');
  let stopping = false;
  const shutdown = async (sig: string) => {
    if (stopping) return;
    stopping = true;
    cluster.logs.logger('lab').info('signal received, stopping', { signal: sig });
    const hard = setTimeout(() => process.exit(1), 30_000);
    hard.unref();
    await cluster.stop();
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGHUP', () => void shutdown('SIGHUP'));
} catch (err) {
  process.stderr.write(`lab process failed to start: ${(err as Error).stack ?? err}\n`);
  process.exit(1);
}
