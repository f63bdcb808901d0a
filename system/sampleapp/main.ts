// `system/main.ts sampleapp [--port 8080] [--host 0.0.0.0]`: the sample application as a pod's process.
import { parseArgs } from 'node:util';
import { startSampleApp } from './server.ts';

export type { SampleApp, SampleAppOptions } from './server.ts';
export { startSampleApp } from './server.ts';

const USAGE = `usage: sampleapp [--port 8080] [--host 0.0.0.0] [--no-access-log]
  httpbin-style sample application (go-httpbin conventions); GET / lists the endpoints`;

export async function main(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      port: { type: 'string', default: '8080' },
      host: { type: 'string', default: '0.0.0.0' },
      'no-access-log': { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
    allowPositionals: false,
  });
  if (values.help) {
    process.stdout.write(USAGE + '\n');
    return;
  }
  const port = parsePort(values.port);
  const app = await startSampleApp({
    host: values.host,
    port,
    accessLog: values['no-access-log'] ? false : 'stdout',
  });
  logLine('info', 'listening', { host: app.host, port: app.port });
  stopOnSignals(app.close);
}

export function parsePort(text: string, flag = '--port'): number {
  if (!/^\d{1,5}$/.test(text) || Number(text) > 65535) {
    throw new Error(`${flag}: expected a port number from 0 to 65535, got ${JSON.stringify(text)}`);
  }
  return Number(text);
}

function logLine(level: string, msg: string, fields: Record<string, unknown>): void {
  process.stdout.write(
    JSON.stringify({ ts: new Date().toISOString(), level, component: 'sampleapp', msg, ...fields }) + '\n',
  );
}

/** SIGTERM (kubelet) and SIGINT (a terminal) close the listener and its connections, then exit 0. */
function stopOnSignals(close: () => Promise<void>): void {
  const stop = (signal: NodeJS.Signals) => {
    logLine('info', 'shutting down', { signal });
    close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}
