// The echo backend's gRPC mode, as upstream's echo-basic image serves it when GRPC_ECHO_SERVER is set (Gateway API
// v1.6.1 conformance/echo-basic/grpc/grpc.go): the service gateway_api_conformance.echo_basic.grpcecho.GrpcEcho of
// grpcecho.proto (transcribed next to this file) in plaintext HTTP/2 on HTTP_PORT (3000) and, with TLS_SERVER_CERT and
// TLS_SERVER_PRIV_KEY (files; upstream's names for this mode), over TLS on HTTPS_PORT (8443). Echo and EchoTwo answer
// with the assertions the GATEWAY-GRPC conformance tests read: the fully qualified method, the request's headers (its
// metadata and `:authority`), the authority and the pod context; EchoThree is left unimplemented (UNIMPLEMENTED, as
// upstream's). Differences from grpc-go's server, both from what @grpc/grpc-js exposes: the headers grpc-js keeps out
// of a call's metadata (content-type, te, grpc-timeout, grpc-encoding, grpc-accept-encoding) are not echoed, and the
// TLS assertions carry the negotiated protocol and the client's certificates but not the TLS version, cipher or SNI.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { bindGrpc, shutdownGrpc } from '../shared/grpc-listen.ts';
import type { EchoContext } from './response.ts';

export const GRPC_ECHO_SERVICE = 'gateway_api_conformance.echo_basic.grpcecho.GrpcEcho';
const PROTO = join(dirname(fileURLToPath(import.meta.url)), 'grpcecho.proto');

export interface EchoAssertions {
  fullyQualifiedMethod: string;
  headers: { key: string; value: string }[];
  authority: string;
  context: { namespace: string; ingress: string; serviceName: string; pod: string };
  tlsAssertions?: {
    version: string;
    negotiatedProtocol: string;
    serverName: string;
    cipherSuite: string;
    peerCertificates: string[];
  };
}

export interface EchoResponse {
  assertions?: EchoAssertions;
  request?: Record<string, never>;
}

/** grpcecho.proto's GrpcEcho service: its definition (server) and client constructor; loaded once. */
let loaded: grpc.ServiceClientConstructor | undefined;
export function grpcEchoService(): grpc.ServiceClientConstructor {
  if (!loaded) {
    const def = protoLoader.loadSync(PROTO, { keepCase: false, defaults: true, arrays: true, objects: true });
    const pkg = grpc.loadPackageDefinition(def) as any;
    loaded = pkg.gateway_api_conformance.echo_basic.grpcecho.GrpcEcho as grpc.ServiceClientConstructor;
  }
  return loaded;
}

function assertionsOf(
  call: grpc.ServerUnaryCall<unknown, unknown>,
  method: string,
  context: EchoContext,
  tls: boolean,
): EchoAssertions {
  const authority = call.getHost();
  const headers = [{ key: ':authority', value: authority }];
  // getMap() names each key once; get() gives all of its values (binary `-bin` ones base64, as on the wire).
  for (const key of Object.keys(call.metadata.getMap())) {
    for (const v of call.metadata.get(key)) headers.push({ key, value: Buffer.isBuffer(v) ? v.toString('base64') : v });
  }
  const out: EchoAssertions = {
    fullyQualifiedMethod: `/${GRPC_ECHO_SERVICE}/${method}`,
    headers,
    authority,
    context: { namespace: context.namespace, ingress: context.ingress, serviceName: context.service, pod: context.pod },
  };
  if (tls) {
    const auth = call.getAuthContext();
    out.tlsAssertions = {
      version: '',
      negotiatedProtocol: 'h2',
      serverName: '',
      cipherSuite: '',
      peerCertificates: auth.sslPeerCertificate ? [pemOf(auth.sslPeerCertificate.raw)] : [],
    };
  }
  return out;
}

function pemOf(der: Buffer): string {
  const b64 = der.toString('base64').replace(/(.{64})/g, '$1\n');
  return `-----BEGIN CERTIFICATE-----\n${b64.endsWith('\n') ? b64 : `${b64}\n`}-----END CERTIFICATE-----\n`;
}

function implementation(
  context: EchoContext,
  tls: boolean,
  log: (l: string) => void,
): grpc.UntypedServiceImplementation {
  const echo =
    (method: string): grpc.handleUnaryCall<unknown, EchoResponse> =>
    (call, callback) => {
      log(`Received over ${tls ? 'TLS' : 'plaintext'}: ${method}`);
      callback(null, { assertions: assertionsOf(call, method, context, tls), request: {} });
    };
  // EchoThree stays out: grpc-js answers a method without a handler with UNIMPLEMENTED, as grpc-go's Unimplemented server.
  return { Echo: echo('Echo'), EchoTwo: echo('EchoTwo') };
}

export interface GrpcEchoOptions {
  host?: string;
  port?: number;
  httpsPort?: number;
  /** PEM files (TLS_SERVER_CERT, TLS_SERVER_PRIV_KEY): with both, the TLS server is started too. */
  tlsCert?: string;
  tlsKey?: string;
  context: EchoContext;
  log?: (l: string) => void;
}

export interface GrpcEcho {
  port: number;
  https?: number;
  close: () => Promise<void>;
}

export async function startGrpcEcho(o: GrpcEchoOptions): Promise<GrpcEcho> {
  const host = o.host ?? '0.0.0.0';
  const log = o.log ?? (() => {});
  const service = grpcEchoService().service;
  const servers: grpc.Server[] = [];
  const plain = new grpc.Server();
  plain.addService(service, implementation(o.context, false, log));
  servers.push(plain);
  // Calls still open after a second are cut, so a stopping pod does not wait on a client.
  const close = () => Promise.all(servers.map((s) => shutdownGrpc(s, 1000))).then(() => {});
  try {
    const port = await bindGrpc(plain, host, o.port ?? 3000);
    log(`plaintext server listening at ${host}:${port}`);
    if (!o.tlsCert || !o.tlsKey) return { port, close };
    const secure = new grpc.Server();
    secure.addService(service, implementation(o.context, true, log));
    servers.push(secure);
    const creds = grpc.ServerCredentials.createSsl(null, [
      { cert_chain: readFileSync(o.tlsCert), private_key: readFileSync(o.tlsKey) },
    ]);
    const https = await bindGrpc(secure, host, o.httpsPort ?? 8443, creds);
    log(`secure server listening at ${host}:${https}`);
    return { port, https, close };
  } catch (err) {
    await close();
    throw err;
  }
}
