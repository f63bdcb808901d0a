// The HTTP codecs of a listener socket that runs the HTTP connection manager: which codec a connection gets and the
// servers that speak them (node:http for HTTP/1.1, node:http2 for HTTP/2). Envoy's rules
// (source/common/http/conn_manager_utility.cc determineNextProtocol, codec_type in http_connection_manager.proto):
// over TLS the ALPN protocol the filter chains' `alpn_protocols` and the client agreed on (`h2` → HTTP/2, `http/1.1`
// → HTTP/1.1, none → as in the clear); in the clear, codec_type HTTP1 or HTTP2 as told, AUTO by the first bytes
// (the HTTP/2 connection preface `PRI * HTTP/2` → HTTP/2, h2c with prior knowledge; anything else HTTP/1.1, on the
// same port). An HTTP/2 session gets the HCM's http2_protocol_options (SETTINGS max_concurrent_streams and
// initial_window_size, the connection window by WINDOW_UPDATE, the HPACK table size). A request whose header block
// is over max_request_headers_kb or common_http_protocol_options.max_headers_count is refused as Envoy's HTTP/2 codec
// refuses it (source/common/http/http2/codec_impl.cc saveHeader: stat http2.header_overflow, the stream reset with
// INTERNAL_ERROR, the connection kept). HTTP/1.1 requests over those limits get Envoy's HTTP/1 codec's 431
// (http/active-stream.ts); node:http's own limit is raised to Envoy's largest max_request_headers_kb for that.
import http from 'node:http';
import http2 from 'node:http2';
import net from 'node:net';
import tls from 'node:tls';
import type { DownstreamUpgrade } from '../filters/filter-api.ts';
import { type HcmConfig, headerOverflow, MAX_HEADERS_KB_LIMIT } from '../http/hcm-config.ts';
import type { Counter } from '../stats.ts';
import { type ClientCertCheck, chainOf, checkClientCert, requestClientCert } from '../tls/client-cert.ts';
import type { TlsChain } from '../tls/tls-config.ts';
import { pickTlsChain } from '../tls/tls-config.ts';

export type HttpProtocol = 'http1' | 'http2';

/** What the codec servers need from their listener socket (active-listener.ts's ListenerSocket). */
export interface CodecOwner {
  /** Runs `f` once a listener is active on the socket (at once when one is). */
  whenActive(f: () => void): void;
  /** The active listener's HCM settings and TLS chains (undefined before the first listener). */
  hcmConfig(): HcmConfig | undefined;
  tlsChains(): TlsChain[];
  /** A new connection (after its TLS handshake): the connection handler's accounting. */
  onConnection(c: net.Socket): void;
  /** Its codec is known: the HCM's downstream_cx_http1_* or downstream_cx_http2_*. */
  onCodec(c: net.Socket, protocol: HttpProtocol): void;
  /** A request; `upgrade`: an HTTP/1.1 upgrade request's raw connection (filters/router/upgrade.ts tunnels it). */
  onRequest(req: http.IncomingMessage, res: http.ServerResponse, upgrade?: DownstreamUpgrade): void;
  onHandshake(c: tls.TLSSocket): void;
  /** A failed handshake (ssl.connection_error, the [connection] debug line). */
  onTlsError(c: net.Socket, err: Error): void;
  /** The client certificate check of a handshake done (client-cert.ts): its stats; a failure closes it. */
  onClientCert(c: tls.TLSSocket, check: ClientCertCheck): void;
  /** `http2.*` codec stats (Envoy's root-scope http2.header_overflow, http2.tx_reset). */
  http2Stat(name: 'header_overflow' | 'tx_reset'): Counter;
}

const PREFACE = Buffer.from('PRI * HTTP/2');

/** The servers of one HTTP listener socket: the accepting one (net or tls), and the HTTP/1.1 and HTTP/2 codecs. */
export class HttpCodecServers {
  readonly front: net.Server;
  readonly h1: http.Server;
  readonly h2: http2.Http2Server;
  readonly sessions = new Set<http2.ServerHttp2Session>();
  private readonly owner: CodecOwner;
  private settingsKey = '';

  constructor(owner: CodecOwner, secure: boolean) {
    this.owner = owner;
    // Host is checked by the connection manager, as in Envoy (an absolute-form URI supplies it).
    const opts = {
      keepAliveTimeout: 0,
      requestTimeout: 0,
      headersTimeout: 60_000,
      requireHostHeader: false,
      maxHeaderSize: (MAX_HEADERS_KB_LIMIT + 64) * 1024,
    };
    this.h1 = http.createServer(opts, (req, res) => owner.onRequest(req, res));
    // The idle timeout is the connection handler's (active-listener.ts): with a listener here, node:http does not
    // destroy a socket on its 'timeout' (it would, a request in flight included).
    this.h1.on('timeout', () => {});
    // CONNECT and upgrades (WebSocket): Node hands over the socket; the connection manager answers on it and the
    // connection closes after, unless the answer is a 101 and the router tunnels it (filters/router/upgrade.ts).
    const onRaw = (req: http.IncomingMessage, socket: net.Socket, head: Buffer) => {
      const res = new http.ServerResponse(req);
      res.shouldKeepAlive = false;
      res.assignSocket(socket);
      res.once('finish', () => {
        if (res.statusCode !== 101) socket.end();
      });
      owner.onRequest(req, res, req.method === 'CONNECT' ? undefined : { socket, head });
    };
    this.h1.on('connect', onRaw);
    this.h1.on('upgrade', onRaw);
    // node:http2's own header limits sit above Envoy's (checked per request below), so Envoy's answer is the one given.
    this.h2 = http2.createServer({ maxHeaderListPairs: 65_536, settings: { maxHeaderListSize: 16 * 1024 * 1024 } });
    this.h2.on('session', (session: http2.ServerHttp2Session) => this.onSession(session));
    this.h2.on('request', (req: http2.Http2ServerRequest, res: http2.Http2ServerResponse) =>
      this.onH2Request(req, res),
    );
    this.h2.on('sessionError', () => {});
    if (!secure) {
      this.front = net.createServer((c) => {
        owner.onConnection(c);
        owner.whenActive(() => this.byConfig(c));
      });
      return;
    }
    // The filter chain by SNI (tls-config.ts); none: the handshake fails and the connection is closed, as Envoy
    // closes a connection no filter chain matches. Clients without SNI get the default context (setSecureContext
    // in ListenerSocket.activate): the default chain's certificate, or none, which fails their handshake.
    // Node calls it on the connection's TLSSocket: the chain's client certificate request is set on it.
    const SNICallback = function (
      this: tls.TLSSocket,
      name: string,
      cb: (err: Error | null, ctx?: tls.SecureContext) => void,
    ) {
      owner.whenActive(() => {
        const chain = pickTlsChain(owner.tlsChains(), name);
        if (chain) requestClientCert(this, chain);
        if (chain) cb(null, chain.context);
        else cb(new Error(`no filter chain matches server name ${name}`));
      });
    };
    // ALPN: set per listener in configure(); none negotiated, the codec is chosen as in the clear. Client
    // certificates are asked for per chain (requestCert: ListenerSocket.activate for clients without SNI) and
    // refused by checkClientCert, not by Node's rejectUnauthorized.
    const front = tls.createServer({ SNICallback, rejectUnauthorized: false });
    front.on('secureConnection', (c: tls.TLSSocket) => {
      const check = checkClientCert(c, chainOf(c, pickTlsChain(owner.tlsChains(), undefined)));
      owner.onClientCert(c, check);
      if (check.failure) {
        c.destroy();
        return;
      }
      owner.onHandshake(c);
      owner.onConnection(c);
      if (c.alpnProtocol === 'h2') this.toH2(c);
      else if (c.alpnProtocol === 'http/1.1') this.toH1(c);
      else owner.whenActive(() => this.byConfig(c));
    });
    front.on('tlsClientError', (err: Error, c: tls.TLSSocket) => {
      owner.onTlsError(c, err);
      c.destroy();
    });
    this.front = front;
  }

  /**
   * A listener (re)activated: its ALPN list (the TLS chains' alpn_protocols, one list per listener: listener-config.ts)
   * for new TLS connections, selected as Envoy selects it (SSL_select_next_proto: the server's order, the first the
   * client offers; none configured: no ALPN). One difference: when the client offers none of them, Node's TLS sends
   * the no_application_protocol alert where Envoy goes on without ALPN. New HTTP/2 sessions get the HCM's
   * http2_protocol_options.
   */
  configure(cfg: HcmConfig | undefined, alpn: string[] = []): void {
    if (this.front instanceof tls.Server) {
      // What tls.Server keeps from its ALPNProtocols option (length-prefixed names), read for every new connection.
      (this.front as tls.Server & { ALPNProtocols?: Buffer }).ALPNProtocols = alpn.length
        ? Buffer.concat(alpn.flatMap((p) => [Buffer.from([p.length]), Buffer.from(p)]))
        : undefined;
    }
    const o = cfg?.http2;
    if (!o) return;
    const key = JSON.stringify(o);
    if (key === this.settingsKey) return;
    this.settingsKey = key;
    this.h2.updateSettings({
      maxConcurrentStreams: Math.min(o.maxConcurrentStreams, 2 ** 32 - 1),
      initialWindowSize: o.initialStreamWindowSize,
      headerTableSize: o.hpackTableSize,
      maxHeaderListSize: 16 * 1024 * 1024,
    });
  }

  /** The codec by codec_type: HTTP1, HTTP2, or AUTO by the first bytes (the HTTP/2 preface or not). */
  private byConfig(c: net.Socket): void {
    const codec = this.owner.hcmConfig()?.codec ?? 'AUTO';
    if (codec !== 'AUTO') {
      if (codec === 'HTTP1') this.toH1(c);
      else this.toH2(c);
      return;
    }
    let seen: Buffer = Buffer.alloc(0);
    const onData = (d: Buffer) => {
      seen = seen.length ? Buffer.concat([seen, d]) : d;
      const n = Math.min(seen.length, PREFACE.length);
      const h2 = seen.subarray(0, n).equals(PREFACE.subarray(0, n));
      if (h2 && seen.length < PREFACE.length) return;
      c.off('data', onData);
      c.off('end', onEnd);
      c.pause();
      c.unshift(seen);
      if (h2) this.toH2(c);
      else this.toH1(c);
    };
    const onEnd = () => c.destroy();
    c.on('data', onData);
    c.once('end', onEnd);
  }

  private toH1(c: net.Socket): void {
    this.owner.onCodec(c, 'http1');
    this.h1.emit('connection', c);
    c.resume();
  }

  /** The socket goes to the HTTP/2 server paused: the session reads it natively, bytes read so far included. */
  private toH2(c: net.Socket): void {
    this.owner.onCodec(c, 'http2');
    this.h2.emit('connection', c);
  }

  private onSession(session: http2.ServerHttp2Session): void {
    this.sessions.add(session);
    session.once('close', () => this.sessions.delete(session));
    session.on('error', () => {});
    const window = this.owner.hcmConfig()?.http2.initialConnectionWindowSize;
    if (window && window !== 65_535) {
      // The connection window is not a SETTINGS value: Envoy raises it by a WINDOW_UPDATE once connected.
      const apply = () => session.setLocalWindowSize(window);
      if (session.socket && !session.connecting) apply();
      else session.once('connect', apply);
    }
  }

  private onH2Request(req: http2.Http2ServerRequest, res: http2.Http2ServerResponse): void {
    const cfg = this.owner.hcmConfig();
    if (cfg && headerOverflow(req.rawHeaders, cfg)) {
      // Envoy: stats_.header_overflow_.inc(); the callback fails and nghttp2/oghttp2 reset the stream.
      this.owner.http2Stat('header_overflow').inc();
      this.owner.http2Stat('tx_reset').inc();
      req.stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR);
      return;
    }
    this.owner.onRequest(req as unknown as http.IncomingMessage, res as unknown as http.ServerResponse);
  }

  /** Stops taking connections; HTTP/1.1 idle connections close now, HTTP/2 sessions get GOAWAY and drain. */
  close(): void {
    this.front.close();
    this.h1.closeIdleConnections();
    for (const s of this.sessions) s.close();
  }

  /** Closes everything now (shutdown). */
  shutdown(done: () => void): void {
    this.front.close(() => done());
    this.h1.closeAllConnections();
    this.h1.close(() => {});
    for (const s of this.sessions) s.destroy();
  }
}
