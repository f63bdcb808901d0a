// `system/main.ts sampleapp [--port 8080] [--host 0.0.0.0]`: the sample application as a pod's process.
import { LogRegistry } from '../shared/log.ts';
import { serviceArgs, stopOnSignals } from '../shared/sample-service.ts';
import { startSampleApp } from './server.ts';

export type { SampleApp, SampleAppOptions } from './server.ts';
export { startSampleApp } from './server.ts';

const USAGE = `usage: sampleapp [--port 8080] [--host 0.0.0.0] [--no-access-log]
  httpbin-style sample application (go-httpbin conventions); GET / lists the endpoints`;

export async function main(args: string[]): Promise<void> {
  const a = serviceArgs(args, USAGE, 8080, ['no-access-log']);
  if (!a) return;
  const app = await startSampleApp({
    host: a.host,
    port: a.port,
    accessLog: a.flags.has('no-access-log') ? false : 'stdout',
  });
  const log = new LogRegistry().logger('sampleapp');
  log.info('listening', { host: app.host, port: app.port });
  stopOnSignals(app.close, (signal) => log.info('shutting down', { signal }));
}
