// `system/main.ts extauth [--port 9000] [--grpc-port 9001] [--host 0.0.0.0]`: the ext-auth sample as a pod's process
// (HTTP on --port, Authorization/Check over gRPC on --grpc-port).
import { serviceArgs, stopOnSignals } from '../shared/sample-service.ts';
import { startExtAuth } from './server.ts';

export type { ExtAuth, ExtAuthOptions } from './server.ts';
export { decide, startExtAuth } from './server.ts';

const USAGE = `usage: extauth [--port 9000] [--grpc-port 9001] [--host 0.0.0.0]
  ext_authz HTTP service: allows a request carrying "x-ext-authz: allow" (200), denies any other with 403;
  the same decision over gRPC (envoy.service.auth.v3.Authorization/Check) on --grpc-port`;

export async function main(args: string[]): Promise<void> {
  const a = serviceArgs(args, USAGE, 9000, [], ['grpc-port']);
  if (!a) return;
  const grpcPort = a.ports['grpc-port'] ?? 9001;
  const server = await startExtAuth({ host: a.host, port: a.port, grpcPort, log: 'stdout' });
  stopOnSignals(server.close);
}
