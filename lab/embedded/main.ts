// The lab process: `node lab/embedded/main.ts --name <lab> [--home <dir>] [--log-level <level>] [--force-lb-fallback]
// [--lb-delay-ms <ms>] [--crash-backoff <initial>:<max>] [--sa-token-max-expiration <s>]`. It runs the embedded
// cluster until SIGTERM/SIGINT, then stops every pod and exits. `npm run lab:up` starts it in the background with its
// own environment, so GWLAB_LB_DELAY_MS, GWLAB_CRASH_BACKOFF and GWLAB_SA_TOKEN_MAX_EXPIRATION (the defaults of the
// three flags) configure a lab started that way.
import module from 'node:module';
import { parseArgs } from 'node:util';
import { parseLevel } from '../../system/shared/log.ts';
import { BACKOFF_ENV, LB_DELAY_ENV, parseBackoff, parseDelayMs, startEmbeddedCluster } from './cluster.ts';
import { parseTokenExpiration, SA_TOKEN_MAX_EXPIRATION_ENV, tellStarter } from './process.ts';

const { values } = parseArgs({
  options: {
    name: { type: 'string', default: 'gwlab' },
    home: { type: 'string' },
    'log-level': { type: 'string', default: 'info' },
    'force-lb-fallback': { type: 'boolean', default: false },
    'lb-delay-ms': { type: 'string', default: process.env[LB_DELAY_ENV] || undefined },
    'crash-backoff': { type: 'string', default: process.env[BACKOFF_ENV] || undefined },
    'sa-token-max-expiration': { type: 'string', default: process.env[SA_TOKEN_MAX_EXPIRATION_ENV] || undefined },
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

/** Parses an option's value, or exits 2 naming the flag (and its environment variable) and the reason. */
function option<T>(name: string, env: string, text: string | undefined, parse: (text: string) => T): T | undefined {
  if (text === undefined) return undefined;
  try {
    return parse(text);
  } catch (err) {
    console.error(`--${name} (or ${env}): ${(err as Error).message}`);
    process.exit(2);
  }
}
const lbProvisionDelayMs = option('lb-delay-ms', LB_DELAY_ENV, values['lb-delay-ms'], parseDelayMs);
const backoff = option('crash-backoff', BACKOFF_ENV, values['crash-backoff'], parseBackoff);
const serviceAccountMaxTokenExpirationSeconds = option(
  'sa-token-max-expiration',
  SA_TOKEN_MAX_EXPIRATION_ENV,
  values['sa-token-max-expiration'],
  parseTokenExpiration,
);
if (values.home) process.env.GWLAB_HOME = values.home;

try {
  const cluster = await startEmbeddedCluster({
    name: values.name!,
    home: values.home,
    logLevel: level,
    forceLbPortFallback: values['force-lb-fallback'],
    lbProvisionDelayMs,
    backoff,
    serviceAccountMaxTokenExpirationSeconds,
    onServing: () => tellStarter('serving'),
  });
  tellStarter('started');
  // A parent that reads stdout (the tests' lab starts) waits for this line.
  process.stdout.write(JSON.stringify({ ready: true, kubeconfig: cluster.kubeconfigPath, pid: process.pid }) + '\n');
  // What was compiled to start (lab/compile-cache.ts), kept now rather than at exit: the next lab starts warm.
  module.flushCompileCache();
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
