// The ext-auth sample: an HTTP authorization service for Envoy's ext_authz filter in HTTP-service mode. The proxy
// sends it the original request's method, path and (allowed) headers; a 2xx answer allows the request, anything else
// denies it and is relayed to the client. Convention of Istio's ext-authz sample: allow iff `x-ext-authz: allow`.
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Logger, LogRegistry } from '../shared/log.ts';

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
}

export interface ExtAuth {
  host: string;
  port: number;
  url: string;
  close(): Promise<void>;
}

export interface Decision {
  allowed: boolean;
  reason: string;
}

/** The whole policy: exactly `x-ext-authz: allow` (one header line, exact value) allows. */
export function decide(req: Pick<IncomingMessage, 'headers'>): Decision {
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
  const server = http.createServer((req, res) => check(req, res, log));
  // The proxy pools its connections to the authorization service; see the sample app for why this is long.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;

  await new Promise<void>((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException) => {
      reject(new Error(`extauth: cannot listen on ${host}:${opts.port ?? 0}: ${err.code ?? err.message}`));
    };
    server.once('error', onError);
    server.listen({ host, port: opts.port ?? 0 }, () => {
      server.off('error', onError);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const urlHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  log.info('listening', { host, port });
  return {
    host,
    port,
    url: `http://${urlHost}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
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
  const body = `denied by ext_authz: ${decision.reason}; send "${AUTHZ_HEADER}: ${ALLOW_VALUE}" to be allowed\n`;
  res.writeHead(403, {
    [RESULT_HEADER]: 'denied',
    'Content-Type': 'text/plain; charset=utf-8',
    'Content-Length': Buffer.byteLength(body),
  });
  res.end(body);
}
