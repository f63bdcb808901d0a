// `system/main.ts extauth [--port 9000] [--host 0.0.0.0]`: the ext-auth sample as a pod's process.
import { serviceArgs, stopOnSignals } from '../shared/sample-service.ts';
import { startExtAuth } from './server.ts';

export type { ExtAuth, ExtAuthOptions } from './server.ts';
export { decide, startExtAuth } from './server.ts';

const USAGE = `usage: extauth [--port 9000] [--host 0.0.0.0]
  ext_authz HTTP service: allows a request carrying "x-ext-authz: allow" (200), denies any other with 403`;

export async function main(args: string[]): Promise<void> {
  const a = serviceArgs(args, USAGE, 9000);
  if (!a) return;
  const server = await startExtAuth({ host: a.host, port: a.port, log: 'stdout' });
  stopOnSignals(server.close);
}
