// `system/main.ts echo`: the conformance echo backend as a pod's process, configured by the environment as upstream's
// echo-basic image is (Gateway API v1.6.1 conformance/echo-basic): HTTP_PORT (3000), H2C_PORT (3001), HTTPS_PORT
// (8443) with TLS_SERVER_CERT/TLS_SERVER_PRIVKEY[/TLS_CLIENT_CACERTS], and POD_NAME, NAMESPACE, SERVICE_NAME,
// INGRESS_NAME for the body. The embedded node's image catalog maps upstream's echo-basic images here
// (lab/embedded/node/kubelet/system-images.ts), so conformance/base/manifests.yaml applies verbatim.
// TCP_ECHO_SERVER (TCP_PORT, 3000; over TLS on TLS_PORT, 8443, with TLS_SERVER_CERT/TLS_SERVER_PRIV_KEY) and
// UDP_ECHO_SERVER (UDP_PORT, 8080) serve upstream's TCP and UDP echo (l4.ts).
// GRPC_ECHO_SERVER serves upstream's GrpcEcho service (grpc.ts: HTTP_PORT 3000, HTTPS_PORT 8443 with TLS_SERVER_CERT
// and TLS_SERVER_PRIV_KEY), the GATEWAY-GRPC profile's backend. GWLAB_ECHO_STANDIN=coredns (the catalog's entry for the base manifests'
// coredns, whose args it ignores) answers DNS on UDP 53 as that Corefile's whoami zone does (dns.ts).
import { readFileSync } from 'node:fs';
import { stopOnSignals } from '../shared/sample-service.ts';
import { startDnsStandin } from './dns.ts';
import { startGrpcEcho } from './grpc.ts';
import { startTcpEcho, startUdpEcho } from './l4.ts';
import { contextFromEnv } from './response.ts';
import { startEcho } from './server.ts';

const USAGE = `usage: echo   (configured by the environment, as upstream's echo-basic image)
  HTTP_PORT (3000), H2C_PORT (3001), HTTPS_PORT (8443) with TLS_SERVER_CERT and TLS_SERVER_PRIVKEY (TLS_CLIENT_CACERTS)
  GRPC_ECHO_SERVER=1: upstream's GrpcEcho service on HTTP_PORT (3000), over TLS on HTTPS_PORT (8443) with
  TLS_SERVER_CERT and TLS_SERVER_PRIV_KEY
  TCP_ECHO_SERVER=1: upstream's TCP echo on TCP_PORT (3000), and over TLS on TLS_PORT (8443) with TLS_SERVER_CERT and
    TLS_SERVER_PRIV_KEY; UDP_ECHO_SERVER=1: its UDP echo on UDP_PORT (8080)
  POD_NAME, NAMESPACE, SERVICE_NAME, INGRESS_NAME: reported in every echoed body`;

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
  if (standin === 'coredns') {
    const log = (l: string) => process.stdout.write(`${l}\n`);
    const dns = await startDnsStandin({ host: '0.0.0.0', port: 53, log });
    log(`echo: a stand-in for coredns (args ${JSON.stringify(args)}): whoami for foo.bar.com on udp ${dns.port}`);
    stopOnSignals(dns.close);
    return;
  }
  if (standin) {
    process.stdout.write(
      `echo: a stand-in for ${standin} (args ${JSON.stringify(args)}) is not implemented by gwlab's echo; idle\n`,
    );
    const idle = setInterval(() => {}, 1 << 30);
    stopOnSignals(async () => clearInterval(idle));
    return;
  }
  const env = process.env;
  const log = (l: string) => process.stdout.write(`${l}\n`);
  // Upstream's order: GRPC_ECHO_SERVER, then TCP_ECHO_SERVER, then UDP_ECHO_SERVER (echo-basic.go main).
  if (env.GRPC_ECHO_SERVER) {
    const grpc = await startGrpcEcho({
      port: port('HTTP_PORT', 3000),
      httpsPort: port('HTTPS_PORT', 8443),
      tlsCert: env.TLS_SERVER_CERT || undefined,
      tlsKey: env.TLS_SERVER_PRIV_KEY || undefined,
      context: contextFromEnv(env),
      log,
    });
    log(`Starting server (grpc), port ${grpc.port}${grpc.https ? `, ${grpc.https} (tls)` : ''}`);
    stopOnSignals(grpc.close);
    return;
  }
  if (env.TCP_ECHO_SERVER || env.UDP_ECHO_SERVER) {
    const context = contextFromEnv(env);
    const l4 = env.TCP_ECHO_SERVER
      ? await startTcpEcho({
          host: '0.0.0.0',
          port: port('TCP_PORT', 3000),
          context,
          ...(env.TLS_SERVER_CERT && env.TLS_SERVER_PRIV_KEY
            ? {
                tls: {
                  cert: readFileSync(env.TLS_SERVER_CERT),
                  key: readFileSync(env.TLS_SERVER_PRIV_KEY),
                  port: port('TLS_PORT', 8443),
                },
              }
            : {}),
        })
      : await startUdpEcho({ host: '0.0.0.0', port: port('UDP_PORT', 8080), context, log });
    log(`Starting server (${env.TCP_ECHO_SERVER ? 'tcp' : 'udp'}), port ${l4.port}`);
    stopOnSignals(l4.close);
    return;
  }
  const server = await startEcho({
    host: '0.0.0.0',
    httpPort: port('HTTP_PORT', 3000),
    h2cPort: port('H2C_PORT', 3001),
    httpsPort: port('HTTPS_PORT', 8443),
    tlsCert: env.TLS_SERVER_CERT || undefined,
    tlsKey: env.TLS_SERVER_PRIVKEY || undefined,
    tlsClientCa: env.TLS_CLIENT_CACERTS || undefined,
    log,
  });
  process.stdout.write(
    `Starting server, listening on port ${server.http} (http), ${server.h2c} (h2c)${server.https ? `, ${server.https} (https)` : ''}\n`,
  );
  stopOnSignals(server.close);
}
