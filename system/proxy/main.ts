// `system/main.ts proxy -c /etc/envoy/envoy.yaml --service-node <pod>.<ns> --log-level info ...`: the Envoy-style
// proxy as a process. Bad flags or a bad bootstrap throw (the dispatcher prints the message and exits non-zero).
import { renameSync, writeFileSync } from 'node:fs';
import { loadBootstrap } from './bootstrap.ts';
import { parseArgs, usage } from './cli.ts';
import { LogRegistry } from './log.ts';
import { PROXY_VERSION, startProxy } from './server.ts';

export { loadBootstrap } from './bootstrap.ts';
export { type ProxyOptions, ProxyServer, startProxy } from './server.ts';

export async function main(args: string[]): Promise<void> {
  const opts = parseArgs(args);
  if (opts.help) {
    process.stdout.write(usage());
    return;
  }
  if (opts.version) {
    process.stdout.write(`proxy  version: ${PROXY_VERSION}\n`);
    return;
  }
  const bootstrap = loadBootstrap(opts);
  const logs = new LogRegistry({
    level: opts.level,
    components: opts.componentLevels,
    format: opts.logFormat,
    sink: opts.logPath ? LogRegistry.fileSink(opts.logPath) : undefined,
  });
  if (opts.mode === 'Validate') {
    process.stdout.write(`configuration '${opts.configPath || '--config-yaml'}' OK\n`);
    return;
  }
  const server = await startProxy({
    bootstrap,
    cli: opts,
    logs,
    onQuit: () => process.exit(0),
  });
  if (opts.adminAddressPath && server.admin) writeWhole(opts.adminAddressPath, server.admin.address());
  const stop = (signal: NodeJS.Signals) => {
    logs.logger('main').warn(`caught ${signal}`);
    server.stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

/**
 * Writes the file whole or not at all (a temporary file renamed over it): a script polling --admin-address-path must
 * never read it empty or half written, which a plain write (truncate, then write) lets it do.
 */
function writeWhole(path: string, content: string): void {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, content);
  renameSync(tmp, path);
}
