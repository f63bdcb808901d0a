// The proxy's own gRPC client (Envoy's Grpc::AsyncClient with `envoy_grpc`, source/common/grpc/async_client_impl.cc):
// a call to a service on a cluster the proxy knows from CDS, over that cluster's HTTP/2 pool (upstream/async-client.ts
// openStream), so the call takes a host from the cluster's load balancer and counts in the cluster's stats and circuit
// breakers as Envoy's does. Used by ext_authz (Authorization/Check), ratelimit (RateLimitService/ShouldRateLimit) and
// ext_proc (ExternalProcessor/Process, a bidirectional stream). Messages are encoded with the Envoy protos the proxy
// already loads (shared/envoy/protos.ts), as plain snake_case objects; framing is gRPC's (a flag byte, a 4-byte length,
// the message: grpc/doc/PROTOCOL-HTTP2.md). A call fails (GrpcError) on a transport failure, a timeout
// (DEADLINE_EXCEEDED), an HTTP status other than 200, or a grpc-status other than 0, as Envoy's client reports them.
import { PassThrough } from 'node:stream';
import type protobuf from 'protobufjs';
import { lookupType } from '../../shared/envoy/protos.ts';
import { ConfigError, durationMs } from '../config/errors.ts';
import type { Tags } from '../log.ts';
import { openStream, type UpstreamError } from './async-client.ts';
import type { Cluster } from './cluster.ts';

export type Msg = Record<string, any>;

/** gRPC status codes Envoy's client reports for its own failures (grpc/doc/statuscodes.md). */
export const GRPC_STATUS = { OK: 0, CANCELLED: 1, UNKNOWN: 2, DEADLINE_EXCEEDED: 4, INTERNAL: 13, UNAVAILABLE: 14 };

export class GrpcError extends Error {
  readonly code: number;
  constructor(code: number, message: string) {
    super(`gRPC status ${code}: ${message}`);
    this.code = code;
  }
}

export interface GrpcMethod {
  /** `/<package>.<Service>/<Method>`. */
  path: string;
  request: protobuf.Type;
  response: protobuf.Type;
}

/** A method of an Envoy service, its message types from the Envoy protos (loaded on first use). */
export function grpcMethod(service: string, method: string, request: string, response: string): GrpcMethod {
  return { path: `/${service}/${method}`, request: lookupType(request), response: lookupType(response) };
}

export interface CallOptions {
  /** :authority of the call (Envoy: grpc_service.envoy_grpc.authority, else the cluster name). */
  authority: string;
  /** 0: no deadline. */
  timeoutMs: number;
  tags: Tags;
  /** grpc_service.initial_metadata. */
  metadata?: Record<string, string>;
}

/** Where a filter's calls go: a GrpcService with `envoy_grpc` (a cluster from CDS), compiled. */
export interface GrpcTarget {
  cluster: string;
  authority: string;
  timeoutMs: number;
  metadata: Record<string, string>;
}

/**
 * A GrpcService (envoy/config/core/v3/grpc_service.proto): `envoy_grpc` (cluster_name, authority defaulting to the
 * cluster name), `timeout` (else `defaultTimeoutMs`), initial_metadata; `google_grpc` is NACKed.
 */
export function grpcTarget(g: Msg | undefined, where: string, defaultTimeoutMs: number): GrpcTarget {
  if (!g) throw new ConfigError(`${where}: value is required`);
  if (g.google_grpc) throw new ConfigError(`${where}.google_grpc is not supported; use envoy_grpc`);
  const cluster = g.envoy_grpc?.cluster_name;
  if (!cluster) throw new ConfigError(`${where}.envoy_grpc.cluster_name: value length must be at least 1 characters`);
  const metadata: Record<string, string> = {};
  for (const m of (g.initial_metadata ?? []) as Msg[]) metadata[String(m.key).toLowerCase()] = String(m.value ?? '');
  return {
    cluster: String(cluster),
    authority: String(g.envoy_grpc.authority || cluster),
    timeoutMs: g.timeout === undefined ? defaultTimeoutMs : (durationMs(g.timeout) ?? defaultTimeoutMs),
    metadata,
  };
}

export function encodeMessage(type: protobuf.Type, msg: Msg): Buffer {
  const body = type.encode(type.fromObject(msg)).finish();
  const out = Buffer.allocUnsafe(5 + body.length);
  out[0] = 0;
  out.writeUInt32BE(body.length, 1);
  out.set(body, 5);
  return out;
}

export function decodeMessage(type: protobuf.Type, bytes: Uint8Array): Msg {
  return type.toObject(type.decode(bytes), { enums: String, longs: Number, bytes: Buffer, arrays: true, oneofs: true });
}

/** Splits a byte stream into gRPC messages (a message may span chunks, a chunk may hold several). */
export class FrameReader {
  private buf: Buffer = Buffer.alloc(0);
  push(chunk: Buffer): Buffer[] {
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
    const out: Buffer[] = [];
    while (this.buf.length >= 5) {
      const len = this.buf.readUInt32BE(1);
      if (this.buf.length < 5 + len) break;
      out.push(this.buf.subarray(5, 5 + len));
      this.buf = this.buf.subarray(5 + len);
    }
    return out;
  }
}

function first(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

/** The call's end as Envoy's client reads it: an HTTP status other than 200 maps to a gRPC code (Grpc::Utility). */
function callStatus(
  status: number,
  headers: Record<string, string | string[] | undefined>,
  trailers: Record<string, string | string[] | undefined>,
): GrpcError | undefined {
  if (status !== 200) return new GrpcError(httpToGrpc(status), `HTTP status ${status}`);
  const code = first(trailers['grpc-status']) ?? first(headers['grpc-status']);
  if (code === undefined) return new GrpcError(GRPC_STATUS.INTERNAL, 'no grpc-status');
  if (code === '0') return undefined;
  const msg = first(trailers['grpc-message']) ?? first(headers['grpc-message']) ?? '';
  return new GrpcError(Number(code), decodeURIComponent(msg));
}

/** Grpc::Utility::httpToGrpcStatus. */
function httpToGrpc(status: number): number {
  if (status === 400) return GRPC_STATUS.INTERNAL;
  if (status === 401) return 16;
  if (status === 403) return 7;
  if (status === 404) return 12;
  if (status === 429 || status === 502 || status === 503 || status === 504) return GRPC_STATUS.UNAVAILABLE;
  return GRPC_STATUS.UNKNOWN;
}

function transportError(e: UpstreamError): GrpcError {
  if (e.reason === 'timeout') return new GrpcError(GRPC_STATUS.DEADLINE_EXCEEDED, 'deadline exceeded');
  return new GrpcError(GRPC_STATUS.UNAVAILABLE, e.message);
}

function requestHeaders(o: CallOptions): Record<string, string> {
  return {
    host: o.authority,
    'content-type': 'application/grpc',
    te: 'trailers',
    ...(o.timeoutMs > 0 ? { 'grpc-timeout': `${o.timeoutMs}m` } : {}),
    ...o.metadata,
  };
}

/** A unary call: one request message, one response message (or a GrpcError). */
export function grpcUnary(cluster: Cluster, m: GrpcMethod, req: Msg, o: CallOptions): Promise<Msg> {
  if (!cluster.spec.http2) {
    return Promise.reject(new GrpcError(GRPC_STATUS.UNAVAILABLE, `cluster '${cluster.name}' does not speak HTTP/2`));
  }
  return new Promise((resolve, reject) => {
    const reader = new FrameReader();
    const msgs: Buffer[] = [];
    const body = encodeMessage(m.request, req);
    openStream(cluster, { method: 'POST', path: m.path, headers: requestHeaders(o), body }, o.timeoutMs, o.tags, {
      onData: (chunk) => msgs.push(...reader.push(chunk)),
      onEnd: (status, headers, trailers) => {
        const err = callStatus(status, headers, trailers);
        if (err) reject(err);
        else if (msgs.length !== 1) reject(new GrpcError(GRPC_STATUS.INTERNAL, `${msgs.length} response messages`));
        else {
          try {
            resolve(decodeMessage(m.response, msgs[0]!));
          } catch (e) {
            reject(new GrpcError(GRPC_STATUS.INTERNAL, `undecodable response: ${(e as Error).message}`));
          }
        }
      },
      onError: (e) => reject(transportError(e)),
    });
  });
}

/** A bidirectional stream (ext_proc's Process): messages out with send(), in through onMessage, then the end. */
export interface GrpcBidi {
  send(msg: Msg): void;
  /** Half-closes the request side. */
  end(): void;
  /** Resets the stream. */
  cancel(): void;
}

export function grpcBidi(
  cluster: Cluster,
  m: GrpcMethod,
  o: CallOptions,
  on: { message(msg: Msg): void; close(err: GrpcError | undefined): void },
): GrpcBidi {
  const out = new PassThrough();
  let closed = false;
  const close = (err: GrpcError | undefined) => {
    if (closed) return;
    closed = true;
    out.destroy();
    on.close(err);
  };
  if (!cluster.spec.http2) {
    queueMicrotask(() =>
      close(new GrpcError(GRPC_STATUS.UNAVAILABLE, `cluster '${cluster.name}' does not speak HTTP/2`)),
    );
    return { send() {}, end() {}, cancel() {} };
  }
  const reader = new FrameReader();
  const cancel = openStream(
    cluster,
    { method: 'POST', path: m.path, headers: requestHeaders(o), body: out },
    o.timeoutMs,
    o.tags,
    {
      onData: (chunk) => {
        for (const b of reader.push(chunk)) {
          if (closed) return;
          let msg: Msg;
          try {
            msg = decodeMessage(m.response, b);
          } catch (e) {
            cancel('undecodable message');
            close(new GrpcError(GRPC_STATUS.INTERNAL, `undecodable response: ${(e as Error).message}`));
            return;
          }
          on.message(msg);
        }
      },
      onEnd: (status, headers, trailers) => close(callStatus(status, headers, trailers)),
      onError: (e) => close(transportError(e)),
    },
  );
  return {
    send(msg) {
      if (!closed && !out.writableEnded) out.write(encodeMessage(m.request, msg));
    },
    end() {
      if (!out.writableEnded) out.end();
    },
    cancel() {
      if (closed) return;
      cancel('cancelled');
      close(new GrpcError(GRPC_STATUS.CANCELLED, 'cancelled'));
    },
  };
}
