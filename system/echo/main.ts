// `system/main.ts echo`: the conformance echo backend as a pod's process, configured by the environment as upstream's
// echo-basic image is (Gateway API v1.6.1 conformance/echo-basic): HTTP_PORT (3000), H2C_PORT (3001), HTTPS_PORT
// (8443) with TLS_SERVER_CERT/TLS_SERVER_PRIVKEY[/TLS_CLIENT_CACERTS], and POD_NAME, NAMESPACE, SERVICE_NAME,
// INGRESS_NAME for the body. The embedded node's image catalog maps upstream's echo-basic images here
// (lab/embedded/node/kubelet/system-images.ts), so conformance/base/manifests.yaml applies verbatim.
// Upstream's other modes (GRPC_ECHO_SERVER, TCP_ECHO_SERVER, UDP_ECHO_SERVER: the GATEWAY-GRPC/TLS/TCP/UDP profiles'
// backends) are not implemented: the process says so and stays up without serving, so the pods of the base manifests
// run; the tests that would use them are skipped (their features are not supported: conformance/features.ts). So is
// GWLAB_ECHO_STANDIN=<image> (the catalog's entry for the base manifests' coredns, whose args it ignores).
import { stopOnSignals } from '../shared/sample-service.ts';
import { startEcho } from './server.ts';

const USAGE = `usage: echo   (configured by the environment, as upstream's echo-basic image)
  HTTP_PORT (3000), H2C_PORT (3001), HTTPS_PORT (8443) with TLS_SERVER_CERT and TLS_SERVER_PRIVKEY (TLS_CLIENT_CACERTS)
  POD_NAME, NAMESPACE, SERVICE_NAME, INGRESS_NAME: reported in every echoed body`;

const UNIMPLEMENTED = ['GRPC_ECHO_SERVER', 'TCP_ECHO_SERVER', 'UDP_ECHO_SERVER'];

function port(name: string, dflt: number): number {
  const v = process.env[name];
  if (v === undefined || v === '') return dflt;
  if (!/^\d{1,5}$/.test(v) || Number(v) > 65535) throw new Error(`${name}: expected a port number, got ${v}`);
  return Number(v);
}

export async function main(args: string[]): Promise<void> {
  if (args.includes('-h') || args.includes('--help')) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const standin = process.env.GWLAB_ECHO_STANDIN;
  const mode = standin
    ? `a stand-in for ${standin} (args ${JSON.stringify(args)})`
    : UNIMPLEMENTED.find((m) => process.env[m]);
  if (mode) {
    process.stdout.write(
      `echo: ${mode} is not implemented by gwlab's echo (its conformance tests are skipped); idle\n`,
    );
    const idle = setInterval(() => {}, 1 << 30);
    stopOnSignals(async () => clearInterval(idle));
    return;
  }
  const env = process.env;
  const server = await startEcho({
    host: '0.0.0.0',
    httpPort: port('HTTP_PORT', 3000),
    h2cPort: port('H2C_PORT', 3001),
    httpsPort: port('HTTPS_PORT', 8443),
    tlsCert: env.TLS_SERVER_CERT || undefined,
    tlsKey: env.TLS_SERVER_PRIVKEY || undefined,
    tlsClientCa: env.TLS_CLIENT_CACERTS || undefined,
    log: (l) => process.stdout.write(`${l}\n`),
  });
  process.stdout.write(
    `Starting server, listening on port ${server.http} (http), ${server.h2c} (h2c)${server.https ? `, ${server.https} (https)` : ''}\n`,
  );
  stopOnSignals(server.close);
}
