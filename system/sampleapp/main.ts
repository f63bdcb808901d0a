// `system/main.ts sampleapp [--port 8080] [--host 0.0.0.0] [--tls [--tls-cert F] [--tls-key F]] [--tcp-echo-port N]
// [--udp-echo-port N]`: the sample application as a pod's process, over HTTPS with --tls (the certificate and key
// from files, e.g. a kubernetes.io/tls Secret mounted at /etc/tls: BackendTLSPolicy scenarios), optionally with the
// TCP and UDP echo servers TCPRoute and UDPRoute scenarios use.
import { LogRegistry } from '../shared/log.ts';
import { readTlsFiles, serviceArgs, stopOnSignals } from '../shared/sample-service.ts';
import { startL4Echo } from './l4-echo.ts';
import { startSampleApp } from './server.ts';

export type { SampleApp, SampleAppOptions } from './server.ts';
export { startSampleApp } from './server.ts';

const USAGE = `usage: sampleapp [--port 8080] [--host 0.0.0.0] [--no-access-log] [--tls] [--tls-cert F] [--tls-key F]
                 [--tcp-echo-port N] [--udp-echo-port N] [--fail-status CODE]
  httpbin-style sample application (go-httpbin conventions); GET / lists the endpoints
  --tls: serve HTTPS (HTTP/1.1) with --tls-cert (default /etc/tls/tls.crt) and --tls-key (default /etc/tls/tls.key),
         e.g. a kubernetes.io/tls Secret mounted at /etc/tls
  --tcp-echo-port: also echo TCP bytes there, and "\n<pod name>" once the client half-closes
  --udp-echo-port: also answer each UDP datagram there with "<pod name>:<datagram>"
  --fail-status: answer every HTTP request with CODE (100-599): a backend gone bad, for outlier detection`;

export async function main(args: string[]): Promise<void> {
  const a = serviceArgs(args, USAGE, 8080, ['no-access-log', 'tls'], ['tcp-echo-port', 'udp-echo-port'], {
    'tls-cert': '/etc/tls/tls.crt',
    'tls-key': '/etc/tls/tls.key',
    'fail-status': '',
  });
  if (!a) return;
  const fail = a.strings['fail-status'];
  if (fail && !(/^\d{3}$/.test(fail) && Number(fail) >= 100 && Number(fail) <= 599)) {
    throw new Error(`--fail-status ${fail}: an HTTP status code from 100 to 599`);
  }
  const tls = a.flags.has('tls') ? readTlsFiles(a.strings['tls-cert'], a.strings['tls-key']) : undefined;
  const app = await startSampleApp({
    host: a.host,
    port: a.port,
    accessLog: a.flags.has('no-access-log') ? false : 'stdout',
    ...(tls ? { tls } : {}),
    ...(fail ? { failStatus: Number(fail) } : {}),
  });
  const log = new LogRegistry().logger('sampleapp');
  log.info('listening', { host: app.host, port: app.port, scheme: tls ? 'https' : 'http' });
  const echo = await startL4Echo({
    host: a.host,
    tcpPort: a.ports['tcp-echo-port'],
    udpPort: a.ports['udp-echo-port'],
    name: process.env.POD_NAME ?? 'sampleapp',
  });
  if (echo.tcpPort !== undefined || echo.udpPort !== undefined) {
    log.info('echo listening', { tcpPort: echo.tcpPort, udpPort: echo.udpPort });
  }
  stopOnSignals(
    () => Promise.all([app.close(), echo.close()]).then(() => undefined),
    (signal) => log.info('shutting down', { signal }),
  );
}
