// The ext-auth sample's gRPC form: envoy.service.auth.v3.Authorization/Check (Envoy's ext_authz filter with a
// grpc_service), served with @grpc/grpc-js over the Envoy protos the project already ships (shared/envoy/protos.ts).
// The decision is the HTTP form's (server.ts decide: `x-ext-authz: allow`), read from the CheckRequest's
// attributes.request.http.headers. Allowed: status OK with ok_response setting `x-ext-authz-check-result: allowed` on
// the upstream request; denied: status PERMISSION_DENIED with denied_response 403 (envoy.type.v3.StatusCode
// Forbidden), the same header and the HTTP form's body (envoy/service/auth/v3/external_auth.proto).
import * as grpc from '@grpc/grpc-js';
import { envoyService } from '../shared/envoy/protos.ts';
import { bindGrpc, shutdownGrpc } from '../shared/grpc-listen.ts';
import type { Logger } from '../shared/log.ts';

export const AUTHORIZATION_SERVICE = 'envoy.service.auth.v3.Authorization';

export type Decider = (req: { headers: Record<string, string | undefined> }) => { allowed: boolean; reason: string };

/** The service definition of Authorization (the sample serves it; tests serve their own answers with it). */
export function authorizationService(): grpc.ServiceDefinition {
  return envoyService('envoy/service/auth/v3/external_auth.proto', 'envoy.service.auth.v3.Authorization');
}

export interface GrpcListening {
  port: number;
  close(): Promise<void>;
}

function header(key: string, value: string) {
  return { header: { key, value } };
}

export async function listenGrpcAuthz(
  host: string,
  port: number,
  decide: Decider,
  resultHeader: string,
  denyBody: (reason: string) => string,
  log: Logger,
): Promise<GrpcListening> {
  const server = new grpc.Server();
  server.addService(authorizationService(), {
    Check(call: grpc.ServerUnaryCall<any, any>, done: grpc.sendUnaryData<any>) {
      const http = call.request?.attributes?.request?.http ?? {};
      const headers = (http.headers ?? {}) as Record<string, string>;
      const d = decide({ headers });
      log.info(d.allowed ? 'allowed' : 'denied', {
        protocol: 'grpc',
        method: http.method,
        path: http.path,
        host: http.host,
        'x-ext-authz': headers['x-ext-authz'],
        reason: d.reason,
        client_ip: call.request?.attributes?.source?.address?.socket_address?.address,
      });
      if (d.allowed) {
        done(null, { status: { code: 0 }, ok_response: { headers: [header(resultHeader, 'allowed')] } });
        return;
      }
      done(null, {
        status: { code: grpc.status.PERMISSION_DENIED, message: d.reason },
        denied_response: {
          status: { code: 'Forbidden' },
          headers: [header(resultHeader, 'denied'), header('content-type', 'text/plain; charset=utf-8')],
          body: denyBody(d.reason),
        },
      });
    },
  });
  const bound = await bindGrpc(server, host, port);
  log.info('listening (gRPC)', { host, port: bound });
  return { port: bound, close: () => shutdownGrpc(server) };
}
