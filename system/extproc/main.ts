// `system/main.ts extproc [--port 9002] [--host 0.0.0.0]`: the ext-proc sample (server.ts) as a pod's process.
import { serviceArgs, stopOnSignals } from '../shared/sample-service.ts';
import { startExtProc } from './server.ts';

export type { ExtProc, ExtProcOptions } from './server.ts';
export { answer, externalProcessorService, startExtProc } from './server.ts';

const USAGE = `usage: extproc [--port 9002] [--host 0.0.0.0]
  ext_proc processor (envoy.service.ext_proc.v3.ExternalProcessor/Process over gRPC): sets x-extproc-seen and
  x-extproc-path on requests, answers 403 to a request carrying x-extproc-deny`;

export async function main(args: string[]): Promise<void> {
  const a = serviceArgs(args, USAGE, 9002);
  if (!a) return;
  const server = await startExtProc({ host: a.host, port: a.port, log: 'stdout' });
  stopOnSignals(server.close);
}
