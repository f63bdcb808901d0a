// The ext-proc sample: an external processor for Envoy's ext_proc filter, envoy.service.ext_proc.v3.ExternalProcessor/
// Process (a bidirectional stream per request), served with @grpc/grpc-js over the Envoy protos the project ships.
// To request headers it answers with a header mutation that sets `x-extproc-seen: true` and `x-extproc-path: <:path>`
// and removes `x-extproc-remove`; a request carrying `x-extproc-deny` gets an immediate_response instead (403, header
// `x-extproc: denied`, a text body). To response headers (when the proxy sends them) it sets `x-extproc-response: true`.
import * as grpc from '@grpc/grpc-js';
import { envoyService } from '../shared/envoy/protos.ts';
import { bindGrpc, shutdownGrpc } from '../shared/grpc-listen.ts';
import { type Logger, LogRegistry } from '../shared/log.ts';

/** The service definition of ExternalProcessor (the sample serves it; tests serve their own answers with it). */
export function externalProcessorService(): grpc.ServiceDefinition {
  return envoyService(
    'envoy/service/ext_proc/v3/external_processor.proto',
    'envoy.service.ext_proc.v3.ExternalProcessor',
    { longs: Number },
  );
}

export interface ExtProcOptions {
  host?: string;
  /** 0: any free port. */
  port?: number;
  log?: 'stdout' | false | ((line: string) => void);
}

export interface ExtProc {
  port: number;
  close(): Promise<void>;
}

const set = (key: string, value: string) => ({
  header: { key, raw_value: Buffer.from(value) },
  append_action: 'OVERWRITE_IF_EXISTS_OR_ADD',
});

/** The request's headers from a ProcessingRequest's HttpHeaders (value or raw_value). */
export function headersOf(h: any): Record<string, string> {
  const out: Record<string, string> = {};
  for (const x of h?.headers?.headers ?? []) {
    out[String(x.key)] = x.raw_value?.length ? Buffer.from(x.raw_value).toString('utf8') : String(x.value ?? '');
  }
  return out;
}

/** The sample's answer to one ProcessingRequest. */
export function answer(req: any): any {
  if (req.request_headers) {
    const h = headersOf(req.request_headers);
    if (h['x-extproc-deny'] !== undefined) {
      return {
        immediate_response: {
          status: { code: 'Forbidden' },
          headers: { set_headers: [set('x-extproc', 'denied'), set('content-type', 'text/plain')] },
          body: Buffer.from('denied by ext_proc: the request carries x-extproc-deny\n'),
          details: 'extproc_sample_denied',
        },
      };
    }
    return {
      request_headers: {
        response: {
          header_mutation: {
            set_headers: [set('x-extproc-seen', 'true'), set('x-extproc-path', h[':path'] ?? '')],
            remove_headers: ['x-extproc-remove'],
          },
        },
      },
    };
  }
  if (req.response_headers) {
    return {
      response_headers: { response: { header_mutation: { set_headers: [set('x-extproc-response', 'true')] } } },
    };
  }
  // Bodies and trailers (not asked for by the lab's configuration): continue unchanged.
  const kind = Object.keys(req).find((k) => /^(request|response)_(body|trailers)$/.test(k));
  return kind ? { [kind]: {} } : {};
}

export async function startExtProc(opts: ExtProcOptions = {}): Promise<ExtProc> {
  const host = opts.host ?? '127.0.0.1';
  const logOpt = opts.log ?? 'stdout';
  const registry = new LogRegistry({
    level: logOpt === false ? 'off' : 'info',
    sink: typeof logOpt === 'function' ? logOpt : undefined,
  });
  const log: Logger = registry.logger('extproc');
  const server = new grpc.Server();
  server.addService(externalProcessorService(), {
    Process(call: grpc.ServerDuplexStream<any, any>) {
      call.on('data', (req: any) => {
        const res = answer(req);
        if (req.request_headers) {
          const h = headersOf(req.request_headers);
          log.info(res.immediate_response ? 'denied' : 'request headers', {
            path: h[':path'],
            authority: h[':authority'],
          });
        }
        call.write(res);
      });
      call.on('end', () => call.end());
      call.on('error', () => {});
    },
  });
  const port = await bindGrpc(server, host, opts.port ?? 0);
  log.info('listening', { host, port });
  return { port, close: () => shutdownGrpc(server) };
}
