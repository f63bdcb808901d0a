// ext_authz with a gRPC authorization service (`grpc_service.envoy_grpc`): envoy.service.auth.v3.Authorization/Check
// over the cluster's HTTP/2 pool (upstream/grpc-client.ts). The CheckRequest carries what Envoy's CheckRequestUtils
// (source/extensions/filters/common/ext_authz/check_request_utils.cc) fills: source and destination addresses, the
// request time, and attributes.request.http (id, method, headers with the pseudo headers, path, host, scheme, size,
// protocol, the body when with_request_body is set), the route's context_extensions. The CheckResponse is read as
// ext_authz_grpc_impl.cc does: status OK allows with ok_response's header mutations (a header with append true is
// appended to an existing request header, else set; headers_to_remove; response_headers_to_add for the client);
// any other status denies with denied_response's HTTP status (403 when unset), headers and body. A failed call
// (transport, timeout, a gRPC error status) is an error: the caller applies failure_mode_allow / status_on_error.
import type { HeaderMap } from '../stream-info.ts';
import type { Cluster } from '../upstream/cluster.ts';
import {
  GrpcError,
  type GrpcMethod,
  type GrpcTarget,
  grpcMethod,
  grpcUnary,
  type Msg,
} from '../upstream/grpc-client.ts';
import type { FilterStream } from './filter-api.ts';

export type GrpcAuthzTarget = GrpcTarget;

export type GrpcCheckOutcome =
  | { kind: 'ok'; set: [string, string][]; append: [string, string][]; remove: string[]; toClient: HeaderMap }
  | { kind: 'denied'; status: number; headers: HeaderMap; body: string }
  | { kind: 'error'; failure: string };

let check: GrpcMethod | undefined;
function checkMethod(): GrpcMethod {
  check ??= grpcMethod(
    'envoy.service.auth.v3.Authorization',
    'Check',
    'envoy.service.auth.v3.CheckRequest',
    'envoy.service.auth.v3.CheckResponse',
  );
  return check;
}

/** `1.2.3.4:5678` or `[::1]:5678` → envoy.config.core.v3.Address. */
export function socketAddress(hostPort: string): Msg {
  const i = hostPort.lastIndexOf(':');
  const host = (i < 0 ? hostPort : hostPort.slice(0, i)).replace(/^\[|\]$/g, '').replace(/^::ffff:/, '');
  const port = i < 0 ? 0 : Number(hostPort.slice(i + 1)) || 0;
  return { socket_address: { address: host, port_value: port } };
}

/** attributes.request.http.headers: pseudo headers first, then the request's (those `allowed` passes). */
function checkHeaders(s: FilterStream, allowed: ((name: string) => boolean) | undefined): Record<string, string> {
  const out: Record<string, string> = {
    ':authority': s.host,
    ':method': s.method,
    ':path': s.path,
    ':scheme': s.scheme,
  };
  for (const k in s.headers) {
    if (k === 'host') continue;
    if (allowed && !allowed(k)) continue;
    const v = s.headers[k];
    if (v !== undefined) out[k] = Array.isArray(v) ? v.join(',') : String(v);
  }
  return out;
}

export function buildCheckRequest(
  s: FilterStream,
  allowed: ((name: string) => boolean) | undefined,
  body: Buffer | undefined,
  contextExtensions: Record<string, string>,
): Msg {
  const t = s.info.startTime;
  const len = s.headers['content-length'];
  return {
    attributes: {
      source: { address: socketAddress(s.info.downstreamRemote) },
      destination: { address: socketAddress(s.info.downstreamLocal) },
      context_extensions: contextExtensions,
      request: {
        time: { seconds: Math.floor(t / 1000), nanos: (t % 1000) * 1e6 },
        http: {
          id: String(s.tags.StreamId ?? ''),
          method: s.method,
          headers: checkHeaders(s, allowed),
          path: s.path,
          host: s.host,
          scheme: s.scheme,
          query: '',
          fragment: '',
          size: len !== undefined ? Number(len) : body ? body.length : -1,
          protocol: s.info.protocol,
          ...(body ? { body: body.toString('utf8') } : {}),
        },
      },
    },
  };
}

/** HeaderValueOption[] → [name, value] pairs set and appended (ext_authz_grpc_impl.cc copyHeaderFieldIntoResponse). */
function mutations(list: Msg[] | undefined): { set: [string, string][]; append: [string, string][] } {
  const set: [string, string][] = [];
  const append: [string, string][] = [];
  for (const o of list ?? []) {
    const h = o.header ?? {};
    const pair: [string, string] = [String(h.key ?? '').toLowerCase(), String(h.value ?? h.raw_value ?? '')];
    if (!pair[0]) continue;
    (o.append?.value === true ? append : set).push(pair);
  }
  return { set, append };
}

export function readCheckResponse(r: Msg): GrpcCheckOutcome {
  const code = Number(r.status?.code ?? 0);
  if (code === 0) {
    const ok = r.ok_response ?? {};
    const { set, append } = mutations(ok.headers);
    const toClient: HeaderMap = {};
    for (const [k, v] of mutations(ok.response_headers_to_add).set) toClient[k] = v;
    for (const [k, v] of mutations(ok.response_headers_to_add).append) toClient[k] = v;
    return { kind: 'ok', set, append, remove: (ok.headers_to_remove ?? []).map(String), toClient };
  }
  const d = r.denied_response ?? {};
  const statusName = d.status?.code;
  const status = typeof statusName === 'number' ? statusName : Number(httpStatusOf(statusName)) || 403;
  const headers: HeaderMap = {};
  const m = mutations(d.headers);
  for (const [k, v] of [...m.set, ...m.append]) headers[k] = v;
  return { kind: 'denied', status, headers, body: String(d.body ?? '') };
}

/** envoy.type.v3.StatusCode's value names → the number (decodeMessage gives enum names). */
function httpStatusOf(name: unknown): number | undefined {
  if (name === undefined || name === 'Empty') return undefined;
  const e = checkMethod().response.lookupEnum('envoy.type.v3.StatusCode');
  return e.values[String(name)];
}

export async function grpcCheck(cluster: Cluster, target: GrpcAuthzTarget, req: Msg, s: FilterStream) {
  try {
    const r = await grpcUnary(cluster, checkMethod(), req, {
      authority: target.authority,
      timeoutMs: target.timeoutMs,
      tags: s.tags,
      metadata: target.metadata,
    });
    return readCheckResponse(r);
  } catch (e) {
    return { kind: 'error', failure: e instanceof GrpcError ? e.message : String(e) } as const;
  }
}

/** An allowed request: ok_response's mutations on the upstream request, its client headers on the response. */
export function applyOk(s: FilterStream, o: Extract<GrpcCheckOutcome, { kind: 'ok' }>): void {
  for (const [k, v] of o.set) s.headers[k] = v;
  for (const [k, v] of o.append) {
    const cur = s.headers[k];
    // Envoy appends only to a header the request already has (ext_authz.cc, headers_to_append), joined with ','
    // (HeaderMap::appendCopy).
    if (cur !== undefined) s.headers[k] = `${Array.isArray(cur) ? cur.join(',') : String(cur)},${v}`;
  }
  for (const k of o.remove) {
    if (k.startsWith(':') || k === 'host') continue;
    delete s.headers[k.toLowerCase()];
  }
  if (Object.keys(o.toClient).length) s.extraResponseHeaders = { ...s.extraResponseHeaders, ...o.toClient };
}
