// `system/main.ts extauth [--port 9000] [--host 0.0.0.0]`: the ext-auth sample as a pod's process.
import { parseArgs } from 'node:util';
import { startExtAuth } from './server.ts';

export type { ExtAuth, ExtAuthOptions } from './server.ts';
export { decide, startExtAuth } from './server.ts';

const USAGE = `usage: extauth [--port 9000] [--host 0.0.0.0]
  ext_authz HTTP service: allows a request carrying "x-ext-authz: allow" (200), denies any other with 403`;

export async function main(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      port: { type: 'string', default: '9000' },
      host: { type: 'string', default: '0.0.0.0' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
    allowPositionals: false,
  });
  if (values.help) {
    process.stdout.write(USAGE + '\n');
    return;
  }
  if (!/^\d{1,5}$/.test(values.port) || Number(values.port) > 65535) {
    throw new Error(`--port: expected a port number from 0 to 65535, got ${JSON.stringify(values.port)}`);
  }
  const server = await startExtAuth({ host: values.host, port: Number(values.port), log: 'stdout' });
  // SIGTERM (kubelet) and SIGINT (a terminal) close the listener and its connections, then exit 0.
  const stop = () => {
    server.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}
