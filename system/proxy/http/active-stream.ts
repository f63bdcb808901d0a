// One downstream request through an HTTP connection manager, as the filters see it (filters/filter-api.ts's
// FilterStream): its request line and headers, body, selected route and per-filter configs, and one place that writes
// the response (upstream or local reply) so Envoy's response headers, response header mutations, the filters'
// encode path, debug lines and the access log are applied the same way to both. An HTTP/2 stream (node:http2's
// compatibility request and response, listener/http-codec.ts) is read the same way: `:authority` is the Host
// (Envoy's HTTP/2 codec maps one to the other), pseudo headers never go upstream, a body is what follows HEADERS
// without END_STREAM, and connection-specific headers are not sent on it (RFC 9113 §8.2.2).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { PassThrough, type Readable, type Transform } from 'node:stream';
import { applyMutations } from '../config/headers.ts';
import type { CompiledRoute } from '../config/route.ts';
import { ENABLED, isDisabled } from '../filters/disabled.ts';
import type { DownstreamUpgrade, FilterStream, HttpFilter, LocalReplyOptions } from '../filters/filter-api.ts';
import type { Logger, Tags } from '../log.ts';
import { type HeaderMap, headerLines, type ResponseFlag, StreamInfo } from '../stream-info.ts';
import { grpcLocalReplyHeaders, isGrpcContentType } from './grpc-local-reply.ts';
import { type HcmConfig, headerOverflow } from './hcm-config.ts';
import { parseRequestTarget, type TargetOptions } from './request-target.ts';
import { upgradeTypeOf } from './upgrade.ts';

/** What a stream needs from its connection manager (hcm.ts's HcmRuntime). */
export interface StreamOwner {
  readonly config: HcmConfig;
  readonly targetOptions: TargetOptions;
  /** The filter chain in order, the router last. */
  readonly filters: readonly HttpFilter[];
  readonly filtersDisabled: readonly boolean[];
  readonly anyFilterDisabled: boolean;
  /** The `http` logger. */
  readonly httpLog: Logger;
  /** After the last byte (or a downstream reset): stats, response flags, access log. */
  streamComplete(s: ActiveStream): void;
}

/** Request headers that never go upstream (hop-by-hop, or handled by the proxy itself). */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
  'te',
  'expect',
  'http2-settings',
]);

/** Response headers an HTTP/2 response must not carry (RFC 9113 §8.2.2; Node refuses them). */
const H2_CONNECTION_HEADERS = ['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade'];

/** Envoy's maximum buffered request body for retries, mirrors and ext_authz. */
export const MAX_REQUEST_BODY = 16 * 1024 * 1024;

/** The request body is over the limit readBody() was given. */
export class PayloadTooLarge extends Error {
  constructor(limit: number) {
    super(`request body over ${limit} bytes`);
  }
}

let streamCounter = Math.floor(Math.random() * 1e9);

export class ActiveStream implements FilterStream {
  readonly hcm: StreamOwner;
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly info: StreamInfo;
  readonly connectionId: number;
  readonly method: string;
  /** :path as received (with the query), or from an absolute-form URI; '' for CONNECT. */
  path: string;
  /** :authority after the HCM's port stripping; what virtual hosts match. */
  host: string;
  /** :scheme: the connection's (https over TLS), or an absolute-form URI's. */
  scheme: string;
  /** The request came over HTTP/2 (h2 or h2c). */
  readonly http2: boolean;
  /** The connection is TLS (Envoy's `ssl()`): x-forwarded-proto https. */
  readonly tls: boolean;
  /** What the codec refuses in the request-target (Envoy answers it before the connection manager sees it). */
  readonly targetError: { status: 400 | 403 | 431; details: string } | undefined;
  /** Headers to send upstream (filters and the router edit them). */
  readonly headers: HeaderMap;
  route: CompiledRoute | undefined;
  /** Response headers filters want added (cors, ext_authz allowed_client_headers_on_success). */
  extraResponseHeaders: HeaderMap | undefined;
  /** HTTP/2: the response was headers with END_STREAM (nothing more to write). */
  private headersOnly = false;
  /** The response body's encoder (encodeBodyThrough), if a filter set one. */
  private bodyTransform: Transform | undefined;
  /** Set once the response headers went downstream. */
  responseStarted = false;
  /** The response is complete or the downstream is gone: no more writes. */
  done = false;
  downstreamGone = false;
  body: Buffer | undefined;
  private bodyRead: Promise<Buffer | undefined> | undefined;
  private readonly onGone: Array<() => void> = [];
  private tags_: Tags | undefined;
  filterIndex = -1;
  /** An upgrade request's raw connection (the router tunnels it after a 101: http/upgrade.ts). */
  readonly upgrade: DownstreamUpgrade | undefined;
  /** The upgrade asked for (lower-cased `Upgrade` token, `connect`), on an upgrade connection only. */
  readonly upgradeType: string | undefined;

  constructor(
    hcm: StreamOwner,
    req: IncomingMessage,
    res: ServerResponse,
    connectionId: number,
    upgrade?: DownstreamUpgrade,
  ) {
    this.hcm = hcm;
    this.req = req;
    this.res = res;
    this.connectionId = connectionId;
    this.method = req.method ?? 'GET';
    this.upgradeType = upgrade || this.method === 'CONNECT' ? upgradeTypeOf(this.method, req.headers) : undefined;
    this.upgrade = this.upgradeType === undefined ? undefined : upgrade;
    this.path = req.url ?? '/';
    /** HTTP/2: the request arrived on a stream of a multiplexed session (node:http2 compat objects). */
    this.http2 = req.httpVersion === '2.0';
    this.host = req.headers.host ?? (this.http2 ? String(req.headers[':authority'] ?? '') : '');
    // Not copied: HTTP/2's :authority (or an absolute-form URI's authority) is the stream's `host` and the access
    // log's (StreamInfo.authority), and the upstream map below gets it as `host`.
    let requestHeaders = req.headers;
    this.tls = (req.socket as { encrypted?: boolean }).encrypted === true;
    this.scheme = this.tls ? 'https' : 'http';
    const target = parseRequestTarget(
      this.method,
      this.path,
      this.tls ? { ...hcm.targetOptions, tls: true } : hcm.targetOptions,
    );
    if (!this.http2 && headerOverflow(req.rawHeaders, hcm.config)) {
      // Envoy's HTTP/1 codec: headers over max_request_headers_kb or max_headers_count are refused with 431.
      this.targetError = { status: 431, details: 'http1.headers_too_large' };
      requestHeaders = {};
    } else if (!target.ok) {
      // Refused by the codec: the connection manager never got the request headers (Envoy logs "- -").
      this.targetError = target;
      requestHeaders = {};
    } else {
      this.path = target.path ?? '';
      if (target.scheme) this.scheme = target.scheme;
      // The URI's authority replaces the Host header (RFC 9112 §3.2.2), for routing, upstream and the access log.
      if (target.authority !== undefined) this.host = target.authority;
    }
    const info = new StreamInfo(requestHeaders);
    if (!this.targetError) info.authority = this.host;
    info.method = this.targetError ? '' : this.method;
    info.path = this.targetError ? '' : this.path;
    info.scheme = this.scheme;
    info.protocol = this.http2 ? 'HTTP/2' : req.httpVersion === '1.0' ? 'HTTP/1.0' : 'HTTP/1.1';
    info.connectionId = connectionId;
    const sock = req.socket;
    info.downstreamRemote = `${sock.remoteAddress}:${sock.remotePort}`;
    info.downstreamDirectRemote = info.downstreamRemote;
    if (hcm.config.preserveCase && !this.http2) info.requestHeaderCase = headerCase(req.rawHeaders);
    // The HTTP/1 idle timeout counts only while no request is active (active-listener.ts).
    if (!this.http2) (sock as { gwlabActiveStreams?: number }).gwlabActiveStreams = 1;
    info.downstreamLocal = `${sock.localAddress}:${sock.localPort}`;
    this.info = info;
    const h: HeaderMap = {};
    const raw = requestHeaders;
    for (const k in raw) if (!HOP_BY_HOP.has(k) && k.charCodeAt(0) !== 58 /* ':' */) h[k] = raw[k];
    if (raw.te === 'trailers') h.te = 'trailers';
    if (!this.targetError && this.host) h.host = this.host;
    this.headers = h;
    // 'close' follows the last byte written, or a client that went away first: either way the stream ends here.
    res.once('close', () => {
      this.info.endMono = performance.now();
      if (!res.writableFinished && !this.headersOnly) {
        this.downstreamGone = true;
        this.done = true;
        for (const f of this.onGone.splice(0)) f();
      }
      if (!this.http2) (sock as { gwlabActiveStreams?: number }).gwlabActiveStreams = 0;
      hcm.streamComplete(this);
    });
  }

  get streamId(): string {
    if (!this.info.streamId) this.info.streamId = String(++streamCounter * 7919 + Math.floor(Math.random() * 7919));
    return this.info.streamId;
  }

  /** `{"ConnectionId":"3","StreamId":"..."}` for tagged debug lines. */
  get tags(): Tags {
    this.tags_ ??= { ConnectionId: this.connectionId, StreamId: this.streamId };
    return this.tags_;
  }

  /** Runs `f` if the downstream disconnects before the response is complete. */
  onDownstreamGone(f: () => void): () => void {
    this.onGone.push(f);
    return () => {
      const i = this.onGone.indexOf(f);
      if (i >= 0) this.onGone.splice(i, 1);
    };
  }

  /** Request header as routing sees it; pseudo headers included. Multiple values are joined with ','. */
  header = (name: string): string | undefined => {
    switch (name) {
      case ':authority':
        return this.host;
      case ':path':
        return this.path;
      case ':method':
        return this.method;
      case ':scheme':
        return this.scheme;
    }
    const v = this.headers[name];
    if (v === undefined) return undefined;
    return Array.isArray(v) ? v.join(',') : v;
  };

  hasBody(): boolean {
    // HTTP/2: a body follows unless HEADERS carried END_STREAM (gRPC sends no content-length).
    if (this.http2)
      return (this.req as unknown as { stream: { endAfterHeaders: boolean } }).stream.endAfterHeaders !== true;
    const h = this.req.headers;
    return (h['content-length'] !== undefined && h['content-length'] !== '0') || h['transfer-encoding'] !== undefined;
  }

  /**
   * The whole request body (buffered once; retries, mirrors and ext_authz reuse it). With `maxBytes` (the buffer
   * filter's max_request_bytes), a body over it rejects with PayloadTooLarge and the rest of it is read and dropped,
   * so that the caller can still answer 413; past MAX_REQUEST_BODY the connection is closed.
   */
  readBody(maxBytes?: number): Promise<Buffer | undefined> {
    if (this.bodyRead) return this.bodyRead;
    if (!this.hasBody()) {
      this.info.lastDownstreamRxMono = performance.now();
      this.bodyRead = Promise.resolve(undefined);
      return this.bodyRead;
    }
    this.bodyRead = new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      let size = 0;
      let over = false;
      this.req.on('data', (c: Buffer) => {
        size += c.length;
        if (over) return;
        if (maxBytes !== undefined && size > maxBytes) {
          over = true;
          chunks.length = 0;
          reject(new PayloadTooLarge(maxBytes));
          return;
        }
        if (size > MAX_REQUEST_BODY) {
          this.req.destroy();
          reject(new Error('payload too large'));
          return;
        }
        chunks.push(c);
      });
      this.req.once('end', () => {
        this.info.bytesReceived = size;
        this.info.lastDownstreamRxMono = performance.now();
        this.body = Buffer.concat(chunks);
        resolve(this.body);
      });
      this.req.once('error', reject);
    });
    return this.bodyRead;
  }

  requestStream(): Readable | undefined {
    if (this.bodyRead || !this.hasBody()) return undefined;
    // Taken: a later readBody() has nothing to read.
    this.bodyRead = Promise.resolve(undefined);
    const info = this.info;
    const counted = new PassThrough({
      transform(chunk: Buffer, _enc, cb) {
        info.bytesReceived += chunk.length;
        cb(null, chunk);
      },
    } as ConstructorParameters<typeof PassThrough>[0]);
    counted.once('end', () => {
      info.lastDownstreamRxMono = performance.now();
    });
    this.req.pipe(counted);
    return counted;
  }

  /**
   * Whether filter `i` of the chain runs for this stream: always, unless the HCM disables it (`disabled: true`);
   * then only when the route's typed_per_filter_config names it and does not disable it (Envoy's semantics).
   */
  filterOn(i: number): boolean {
    const hcm = this.hcm;
    if (!hcm.filtersDisabled[i]) return true;
    const v = this.route?.perFilter.get(hcm.filters[i]!.name);
    return v !== undefined && !isDisabled(v);
  }

  /** Most specific per-filter config for the filter named `name` on the selected route. */
  perFilterConfig<T>(name: string): T | undefined {
    const v = this.route?.perFilter.get(name);
    return v === ENABLED ? undefined : (v as T | undefined);
  }

  setFlag(flag: ResponseFlag): void {
    this.info.setFlag(flag);
  }

  /**
   * Envoy's sendLocalReply: a text/plain response generated by the proxy (content-length, no
   * x-envoy-upstream-service-time), passed through the encode path of the filters before the one that answered.
   */
  sendLocalReply(status: number, body: string | Buffer = '', opts: LocalReplyOptions = {}): void {
    if (this.done) return;
    if (opts.flag) this.info.setFlag(opts.flag);
    this.info.responseCodeDetails = opts.details ?? this.info.responseCodeDetails;
    // Envoy's filter_manager.cc line, which names a TLS failure's reason (no access log needed to see it).
    if (opts.details && this.hcm.httpLog.on('debug'))
      this.hcm.httpLog.debug(`Sending local reply with details ${opts.details}`, this.tags);
    if (this.responseStarted) {
      // Too late for a reply: Envoy resets the stream.
      this.resetDownstream();
      return;
    }
    const buf = typeof body === 'string' ? Buffer.from(body) : body;
    if (isGrpcContentType(this.headers['content-type'])) {
      // A gRPC request: Envoy answers 200 with grpc-status and grpc-message, trailers-only (grpc-local-reply.ts).
      const headers = grpcLocalReplyHeaders(status, buf, opts.headers);
      delete headers.connection;
      if (opts.routeMutations && this.route) applyMutations(headers, this.route.responseMutations, this.info);
      this.writeHeaders(200, headers, false, this.http2, opts.fromFilter ?? this.hcm.filters.length);
      this.finishWith();
      return;
    }
    const headers: HeaderMap = { ...(opts.headers ?? {}) };
    if (buf.length > 0) headers['content-type'] ??= 'text/plain';
    headers['content-length'] = String(buf.length);
    if (opts.routeMutations && this.route) applyMutations(headers, this.route.responseMutations, this.info);
    this.writeHeaders(status, headers, false, false, opts.fromFilter ?? this.hcm.filters.length);
    this.finishWith(buf);
  }

  /**
   * Writes the response status and headers downstream after the encode path: filters (in reverse), Envoy's
   * server and request-id headers. Upstream responses come here from the router with their own headers.
   */
  writeHeaders(
    status: number,
    headers: HeaderMap,
    fromUpstream: boolean,
    endStream = false,
    filtersBefore = this.hcm.filters.length,
  ): void {
    const hcm = this.hcm;
    const filters = hcm.filters;
    for (let i = Math.min(filtersBefore, filters.length) - 1; i >= 0; i--) {
      const f: HttpFilter = filters[i]!;
      if (f.encodeHeaders && (!hcm.anyFilterDisabled || this.filterOn(i))) f.encodeHeaders(this, status, headers);
    }
    if (this.extraResponseHeaders) {
      for (const k in this.extraResponseHeaders) headers[k] = this.extraResponseHeaders[k];
    }
    switch (hcm.config.serverHeaderTransformation) {
      case 'OVERWRITE':
        headers.server = hcm.config.serverName;
        break;
      case 'APPEND_IF_ABSENT':
        headers.server ??= hcm.config.serverName;
        break;
    }
    if (hcm.config.alwaysSetRequestIdInResponse && this.headers['x-request-id'] !== undefined) {
      headers['x-request-id'] = this.headers['x-request-id'];
    }
    this.info.responseCode = status;
    this.info.responseHeaders = headers;
    if (!fromUpstream && !this.info.responseCodeDetails) this.info.responseCodeDetails = 'local_reply';
    if (this.hcm.httpLog.on('debug')) {
      this.hcm.httpLog.debug(
        `encoding headers via codec (end_stream=false):\n${headerLines(status, headers)}`,
        this.tags,
      );
    }
    this.responseStarted = true;
    // The map is this stream's own (built by the router or the local reply): hand it to Node as it is, minus
    // headers a mutation removed by setting them undefined.
    for (const k in headers) if (headers[k] === undefined) delete headers[k];
    if (this.http2) {
      for (const k of H2_CONNECTION_HEADERS) delete headers[k];
      if (endStream) {
        // Headers that end the stream go as one HEADERS frame with END_STREAM, as Envoy's codec sends them (a gRPC
        // client reads a trailers-only status only from such a frame).
        this.headersOnly = true;
        const stream = (this.res as unknown as { stream: import('node:http2').ServerHttp2Stream }).stream;
        stream.respond({ ...(headers as Record<string, string | string[]>), ':status': status }, { endStream: true });
        return;
      }
    }
    this.res.writeHead(status, headers as Record<string, string | string[]>);
  }

  /**
   * From now on the response body goes downstream through `t` (a compressor's encoder, set from encodeHeaders):
   * what `t` emits is what is sent (and counted in bytesSent); its back-pressure is the downstream's.
   */
  encodeBodyThrough(t: Transform): void {
    const res = this.res;
    this.bodyTransform = t;
    t.on('data', (c: Buffer) => {
      this.info.bytesSent += c.length;
      if (!res.write(c)) {
        t.pause();
        res.once('drain', () => t.resume());
      }
    });
    t.once('end', () => res.end());
    t.once('error', () => res.destroy());
  }

  /** Body bytes downstream; returns false when the client is slow (back-pressure). */
  write(chunk: Buffer): boolean {
    if (this.bodyTransform) return this.bodyTransform.write(chunk);
    this.info.bytesSent += chunk.length;
    return this.res.write(chunk);
  }

  /** Runs `f` once the downstream can take more bytes (after write() returned false). */
  whenDrained(f: () => void): void {
    (this.bodyTransform ?? this.res).once('drain', f);
  }

  finishWith(chunk?: Buffer, trailers?: HeaderMap): void {
    if (this.done) return;
    this.done = true;
    if (this.headersOnly) return;
    if (trailers) this.res.addTrailers(trailers as Record<string, string>);
    if (this.bodyTransform) {
      this.bodyTransform.end(chunk);
      return;
    }
    if (chunk && chunk.length > 0) {
      this.info.bytesSent += chunk.length;
      this.res.end(chunk);
    } else {
      this.res.end();
    }
  }

  /** Abandons the downstream response (a stream reset in Envoy's terms). */
  resetDownstream(): void {
    if (this.done) return;
    this.done = true;
    this.bodyTransform?.destroy();
    this.res.destroy();
  }
}

/** Header names as received, by their lower-case form (the first spelling wins), for preserve_case. */
function headerCase(raw: string[]): Map<string, string> {
  const m = new Map<string, string>();
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    const lower = name.toLowerCase();
    if (name !== lower && !m.has(lower)) m.set(lower, name);
  }
  return m;
}
