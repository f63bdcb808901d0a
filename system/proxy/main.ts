// `system/main.ts proxy -c /etc/envoy/envoy.yaml --service-node <pod>.<ns> --log-level info ...`: the Envoy-style
// proxy as a process. Bad flags or a bad bootstrap throw (the dispatcher prints the message and exits non-zero).
import { writeFileWhole } from '../shared/write-whole.ts';
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
  if (opts.adminAddressPath && server.admin) writeFileWhole(opts.adminAddressPath, server.admin.address()); // a script polls it: never half written
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
