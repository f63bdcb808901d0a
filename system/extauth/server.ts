// The ext-auth sample: an HTTP authorization service for Envoy's ext_authz filter in HTTP-service mode. The proxy
// sends it the original request's method, path and (allowed) headers; a 2xx answer allows the request, anything else
// denies it and is relayed to the client. Convention of Istio's ext-authz sample: allow iff `x-ext-authz: allow`.
// With `grpcPort` it also serves the gRPC form (Authorization/Check, grpc.ts) with the same decision.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type Logger, LogRegistry } from '../shared/log.ts';
import { type ListeningService, listenHttp } from '../shared/sample-service.ts';
import { listenGrpcAuthz } from './grpc.ts';

export const AUTHZ_HEADER = 'x-ext-authz';
export const ALLOW_VALUE = 'allow';
/** Set on every answer, so a proxy configured to pass it on shows the decision to the client or the upstream. */
export const RESULT_HEADER = 'x-ext-authz-check-result';

export interface ExtAuthOptions {
  /** Default 127.0.0.1 (a test helper); the command line listens on 0.0.0.0. */
  host?: string;
  /** Default 0 (any free port); the command line defaults to 9000. */
  port?: number;
  /** Where decision lines go: `'stdout'` (default), a function receiving each JSON line, or false for none. */
  log?: 'stdout' | false | ((line: string) => void);
  /** Also serve Authorization/Check over gRPC on this port (0: any free one); absent: HTTP only. */
  grpcPort?: number;
}

export type ExtAuth = ListeningService & { grpcPort?: number };

export interface Decision {
  allowed: boolean;
  reason: string;
}

/** The whole policy: exactly `x-ext-authz: allow` (one header line, exact value) allows. */
export function decide(req: { headers: Record<string, string | string[] | undefined> }): Decision {
  const value = req.headers[AUTHZ_HEADER];
  if (value === undefined) return { allowed: false, reason: `header ${AUTHZ_HEADER} is missing` };
  if (value === ALLOW_VALUE) return { allowed: true, reason: `header ${AUTHZ_HEADER} is ${ALLOW_VALUE}` };
  return { allowed: false, reason: `header ${AUTHZ_HEADER} is ${JSON.stringify(value)}, not ${ALLOW_VALUE}` };
}

export async function startExtAuth(opts: ExtAuthOptions = {}): Promise<ExtAuth> {
  const host = opts.host ?? '127.0.0.1';
  const logOpt = opts.log ?? 'stdout';
  const registry = new LogRegistry({
    level: logOpt === false ? 'off' : 'info',
    sink: typeof logOpt === 'function' ? logOpt : undefined,
  });
  const log = registry.logger('extauth');
  // The proxy pools its connections to the authorization service: listenHttp keeps them alive long enough.
  const service = await listenHttp('extauth', (req, res) => check(req, res, log), { host, port: opts.port });
  log.info('listening', { host, port: service.port });
  if (opts.grpcPort === undefined) return service;
  const g = await listenGrpcAuthz(host, opts.grpcPort, decide, RESULT_HEADER, denyBody, log).catch(async (e) => {
    await service.close();
    throw e;
  });
  return {
    ...service,
    grpcPort: g.port,
    close: async () => {
      await Promise.all([service.close(), g.close()]);
    },
  };
}

function denyBody(reason: string): string {
  return `denied by ext_authz: ${reason}; send "${AUTHZ_HEADER}: ${ALLOW_VALUE}" to be allowed\n`;
}

function check(req: IncomingMessage, res: ServerResponse, log: Logger): void {
  const decision = decide(req);
  log.info(decision.allowed ? 'allowed' : 'denied', {
    method: req.method,
    path: req.url,
    host: req.headers.host,
    [AUTHZ_HEADER]: req.headers[AUTHZ_HEADER],
    reason: decision.reason,
    client_ip: req.socket.remoteAddress?.replace(/^::ffff:/, ''),
  });
  if (decision.allowed) {
    res.writeHead(200, { [RESULT_HEADER]: 'allowed', 'Content-Length': '0' });
    res.end();
    return;
  }
  const body = denyBody(decision.reason);
  res.writeHead(403, {
    [RESULT_HEADER]: 'denied',
    'Content-Type': 'text/plain; charset=utf-8',
    'Content-Length': Buffer.byteLength(body),
  });
  res.end(body);
}
