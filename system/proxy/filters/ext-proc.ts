// envoy.filters.http.ext_proc, headers mode (source/extensions/filters/http/ext_proc/ext_proc.cc): per request one
// envoy.service.ext_proc.v3.ExternalProcessor/Process stream on the processor's cluster (grpc_service.envoy_grpc, the
// proxy's gRPC client, upstream/grpc-client.ts). The request headers (pseudo headers included, values as raw_value)
// go out as ProcessingRequest.request_headers; the processor's request_headers answer mutates them (header_mutation
// set_headers with Envoy's append rules, remove_headers; pseudo headers and host are not removable) and the request
// goes on, or its immediate_response answers the client (status, headers, body, details). Waiting longer than
// message_timeout (200 ms by default), a failed stream or an unexpected message is an error: failure_mode_allow lets
// the request through, else 500 (details `ext_proc_error_gRPC_error_<code>` / `..._message_timeout`).
// Not implemented, NACKed: response header, body and trailer modes other than SKIP/NONE (the proxy's encode path is
// synchronous; `processing_mode.response_header_mode: SKIP` must be set), observability and async modes.
// Per route: ExtProcPerRoute.disabled.
import { lookupEnum } from '../../shared/envoy/protos.ts';
import { ConfigError, durationMs } from '../config/errors.ts';
import type { HeaderMap } from '../stream-info.ts';
import { GRPC_STATUS, type GrpcMethod, grpcBidi, grpcMethod, grpcTarget, type Msg } from '../upstream/grpc-client.ts';
import { DISABLED, isDisabled } from './disabled.ts';
import type { FilterFactory, FilterStream, J } from './filter-api.ts';

let method: GrpcMethod | undefined;
function processMethod(): GrpcMethod {
  method ??= grpcMethod(
    'envoy.service.ext_proc.v3.ExternalProcessor',
    'Process',
    'envoy.service.ext_proc.v3.ProcessingRequest',
    'envoy.service.ext_proc.v3.ProcessingResponse',
  );
  return method;
}

function compile(c: J) {
  const target = grpcTarget(c.grpc_service, 'ext_proc.grpc_service', 0);
  const m = (c.processing_mode ?? {}) as J;
  const sendRequestHeaders = m.request_header_mode !== 'SKIP';
  if (m.response_header_mode !== 'SKIP') {
    throw new ConfigError(
      'ext_proc.processing_mode.response_header_mode: only SKIP is supported (set it: the default SEND is not implemented)',
    );
  }
  for (const f of ['request_body_mode', 'response_body_mode']) {
    if (m[f] !== undefined && m[f] !== 'NONE')
      throw new ConfigError(`ext_proc.processing_mode.${f}: only NONE is supported`);
  }
  for (const f of ['request_trailer_mode', 'response_trailer_mode']) {
    if (m[f] === 'SEND') throw new ConfigError(`ext_proc.processing_mode.${f}: SEND is not supported`);
  }
  for (const f of ['observability_mode', 'async_mode', 'allow_mode_override']) {
    if (c[f] === true) throw new ConfigError(`ext_proc.${f} is not supported`);
  }
  return {
    target,
    sendRequestHeaders,
    failureModeAllow: c.failure_mode_allow === true,
    messageTimeoutMs: c.message_timeout === undefined ? 200 : (durationMs(c.message_timeout) ?? 200),
  };
}

function headerList(s: FilterStream): Msg[] {
  const out: Msg[] = [
    { key: ':authority', raw_value: Buffer.from(s.host) },
    { key: ':method', raw_value: Buffer.from(s.method) },
    { key: ':path', raw_value: Buffer.from(s.path) },
    { key: ':scheme', raw_value: Buffer.from(s.scheme) },
  ];
  for (const k in s.headers) {
    if (k === 'host') continue;
    const v = s.headers[k];
    for (const one of Array.isArray(v) ? v : v === undefined ? [] : [String(v)]) {
      out.push({ key: k, raw_value: Buffer.from(one) });
    }
  }
  return out;
}

const headerValueOf = (h: Msg) =>
  h.raw_value?.length ? Buffer.from(h.raw_value).toString('utf8') : String(h.value ?? '');

/** HeaderMutation on a header map (ext_proc mutation_utils.cc): append (BoolValue) wins over append_action. */
export function applyHeaderMutation(headers: HeaderMap, m: Msg | undefined): void {
  for (const o of (m?.set_headers ?? []) as Msg[]) {
    const key = String(o.header?.key ?? '').toLowerCase();
    if (!key || key.startsWith(':') || key === 'host') continue;
    const value = headerValueOf(o.header ?? {});
    const action =
      o.append !== undefined
        ? o.append.value
          ? 'APPEND_IF_EXISTS_OR_ADD'
          : 'OVERWRITE_IF_EXISTS_OR_ADD'
        : (o.append_action ?? 'APPEND_IF_EXISTS_OR_ADD');
    const cur = headers[key];
    if (action === 'ADD_IF_ABSENT') {
      if (cur === undefined) headers[key] = value;
    } else if (action === 'OVERWRITE_IF_EXISTS') {
      if (cur !== undefined) headers[key] = value;
    } else if (action === 'OVERWRITE_IF_EXISTS_OR_ADD' || cur === undefined) headers[key] = value;
    else headers[key] = [...(Array.isArray(cur) ? cur : [String(cur)]), value];
  }
  for (const k of (m?.remove_headers ?? []) as string[]) {
    const key = k.toLowerCase();
    if (!key.startsWith(':') && key !== 'host') delete headers[key];
  }
}

type Outcome =
  | { kind: 'continue'; msg: Msg }
  | { kind: 'immediate'; msg: Msg }
  | { kind: 'error'; details: string; failure: string };

/** Sends the request headers and waits for the processor's one answer to them. */
function exchange(s: FilterStream, cluster: Parameters<typeof grpcBidi>[0], cfg: ReturnType<typeof compile>) {
  return new Promise<Outcome>((resolve) => {
    let settled = false;
    const done = (o: Outcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      stream.end();
      if (o.kind !== 'continue') stream.cancel();
      resolve(o);
    };
    const stream = grpcBidi(
      cluster,
      processMethod(),
      { authority: cfg.target.authority, timeoutMs: 0, tags: s.tags, metadata: cfg.target.metadata },
      {
        message(m) {
          if (m.request_headers) done({ kind: 'continue', msg: m.request_headers });
          else if (m.immediate_response) done({ kind: 'immediate', msg: m.immediate_response });
          else done({ kind: 'error', details: 'ext_proc_error_spurious_message', failure: 'unexpected message' });
        },
        close(err) {
          const code = err?.code ?? GRPC_STATUS.UNKNOWN;
          done({
            kind: 'error',
            details: `ext_proc_error_gRPC_error_${code}`,
            failure: err?.message ?? 'stream closed',
          });
        },
      },
    );
    const timer = setTimeout(
      () => done({ kind: 'error', details: 'ext_proc_error_message_timeout', failure: 'message timeout' }),
      cfg.messageTimeoutMs,
    );
    stream.send({ request_headers: { headers: { headers: headerList(s) }, end_of_stream: !s.hasBody() } });
  });
}

export const extProcFactory: FilterFactory = {
  canonicalName: 'envoy.filters.http.ext_proc',
  configTypes: ['envoy.extensions.filters.http.ext_proc.v3.ExternalProcessor'],
  perRouteTypes: ['envoy.extensions.filters.http.ext_proc.v3.ExtProcPerRoute'],
  parsePerRoute(c, where) {
    if (c.disabled === true) return DISABLED;
    throw new ConfigError(`${where}.overrides: ext_proc per-route overrides are not supported`);
  },
  create(name, config, ctx) {
    const cfg = compile(config);
    const stats = ctx.stats.group(`${ctx.statPrefix}ext_proc.`, [
      'streams_started',
      'streams_failed',
      'message_timeouts',
      'failure_mode_allowed',
      'immediate_responses',
    ] as const);
    const log = ctx.logs.logger('ext_proc');
    return {
      name,
      async decodeHeaders(s) {
        if (!cfg.sendRequestHeaders || isDisabled(s.perFilterConfig(name))) return true;
        const cluster = ctx.clusters.get(cfg.target.cluster);
        stats.streams_started.inc();
        const o: Outcome = cluster
          ? await exchange(s, cluster, cfg)
          : {
              kind: 'error',
              details: 'ext_proc_error_gRPC_error_14',
              failure: `cluster '${cfg.target.cluster}' is missing`,
            };
        if (s.done) return false;
        if (o.kind === 'error') {
          if (o.details.endsWith('message_timeout')) stats.message_timeouts.inc();
          else stats.streams_failed.inc();
          log.debug(`ext_proc: ${o.failure}`, s.tags);
          if (cfg.failureModeAllow) {
            stats.failure_mode_allowed.inc();
            return true;
          }
          s.sendLocalReply(500, '', { details: o.details, fromFilter: s.filterIndex });
          return false;
        }
        if (o.kind === 'immediate') {
          stats.immediate_responses.inc();
          const headers: HeaderMap = {};
          applyHeaderMutation(headers, o.msg.headers);
          const c = o.msg.status?.code;
          const code = (typeof c === 'number' ? c : lookupEnum('envoy.type.v3.StatusCode').values[String(c)]) || 200;
          const body = o.msg.body ? Buffer.from(o.msg.body) : '';
          s.sendLocalReply(code, body, {
            details: o.msg.details || 'ext_proc_immediate_response',
            headers,
            fromFilter: s.filterIndex,
          });
          return false;
        }
        applyHeaderMutation(s.headers, o.msg.response?.header_mutation);
        return true;
      },
    };
  },
};
