// A server-side SPDY/3.1 session, just what kubectl's port-forward and exec streams need: the client opens streams
// with SYN_STREAM (headers such as streamtype/port/requestid, and no :method/:path, which is why spdy-transport's
// parser cannot be used), the server answers SYN_REPLY, both sides exchange DATA (FLAG_FIN half-closes), PING is
// echoed, RST_STREAM and GOAWAY end streams and the session. Header blocks are zlib-compressed with the SPDY/3
// dictionary, one compression context per direction for the whole session. Received data is acknowledged with
// WINDOW_UPDATE; the client's windows are not enforced on what we send (Go's spdystream does not enforce them).
// The transport is a byte stream: a socket after an HTTP upgrade, or the binary messages of a WebSocket.
import { EventEmitter } from 'node:events';
import { Duplex } from 'node:stream';
import zlib from 'node:zlib';

const WORDS = [
  'options',
  'head',
  'post',
  'put',
  'delete',
  'trace',
  'accept',
  'accept-charset',
  'accept-encoding',
  'accept-language',
  'accept-ranges',
  'age',
  'allow',
  'authorization',
  'cache-control',
  'connection',
  'content-base',
  'content-encoding',
  'content-language',
  'content-length',
  'content-location',
  'content-md5',
  'content-range',
  'content-type',
  'date',
  'etag',
  'expect',
  'expires',
  'from',
  'host',
  'if-match',
  'if-modified-since',
  'if-none-match',
  'if-range',
  'if-unmodified-since',
  'last-modified',
  'location',
  'max-forwards',
  'pragma',
  'proxy-authenticate',
  'proxy-authorization',
  'range',
  'referer',
  'retry-after',
  'server',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'user-agent',
  'vary',
  'via',
  'warning',
  'www-authenticate',
  'method',
  'get',
  'status',
  '200 OK',
  'version',
  'HTTP/1.1',
  'url',
  'public',
  'set-cookie',
  'keep-alive',
  'origin',
];
const TAIL =
  '100101201202205206300302303304305306307402405406407408409410411412413414415416417502504505' +
  '203 Non-Authoritative Information204 No Content301 Moved Permanently400 Bad Request401 Unauthorized' +
  '403 Forbidden404 Not Found500 Internal Server Error501 Not Implemented503 Service Unavailable' +
  'Jan Feb Mar Apr May Jun Jul Aug Sept Oct Nov Dec 00:00:00 Mon, Tue, Wed, Thu, Fri, Sat, Sun, GMT' +
  'chunked,text/html,image/png,image/jpg,image/gif,application/xml,application/xhtml+xml,text/plain,' +
  'text/javascript,publicprivatemax-age=gzip,deflate,sdchcharset=utf-8charset=iso-8859-1,utf-,*,enq=0.';

/** The SPDY/3 header compression dictionary (1423 bytes): length-prefixed words, then a tail of common values. */
export const SPDY3_DICTIONARY: Buffer = Buffer.concat([
  ...WORDS.map((w) => {
    const b = Buffer.alloc(4 + w.length);
    b.writeUInt32BE(w.length, 0);
    b.write(w, 4, 'latin1');
    return b;
  }),
  Buffer.from(TAIL, 'latin1'),
]);

const T = { SYN_STREAM: 1, SYN_REPLY: 2, RST_STREAM: 3, SETTINGS: 4, PING: 6, GOAWAY: 7, HEADERS: 8, WINDOW_UPDATE: 9 };
const FLAG_FIN = 0x01;
const WINDOW_ACK_BYTES = 32 * 1024;

export interface SpdyTransport {
  write(data: Buffer): void;
  end(): void;
}

/** One SPDY stream as a Duplex: what the client sends is readable, what is written goes out as DATA frames. */
export class SpdyStream extends Duplex {
  readonly id: number;
  readonly headers: Record<string, string>;
  private readonly session: SpdySession;
  private unacked = 0;
  /** @internal */
  remoteClosed = false;

  constructor(session: SpdySession, id: number, headers: Record<string, string>) {
    super({ allowHalfOpen: true });
    this.session = session;
    this.id = id;
    this.headers = headers;
  }

  /** Answers the SYN_STREAM; kubectl waits for it before using the stream. */
  reply(headers: Record<string, string> = {}): Promise<void> {
    return this.session.sendReply(this.id, headers);
  }

  reset(status = 5 /* CANCEL */): void {
    this.session.sendRst(this.id, status);
    this.destroy();
  }

  override _read(): void {}

  override _write(chunk: Buffer, _enc: BufferEncoding, cb: (err?: Error | null) => void): void {
    this.session.sendData(this.id, chunk, false);
    cb();
  }

  override _final(cb: (err?: Error | null) => void): void {
    this.session.sendData(this.id, Buffer.alloc(0), true);
    cb();
  }

  /** @internal */
  receive(data: Buffer, fin: boolean): void {
    if (data.length) {
      this.push(data);
      this.unacked += data.length;
      if (this.unacked >= WINDOW_ACK_BYTES) {
        this.session.sendWindowUpdate(this.id, this.unacked);
        this.session.sendWindowUpdate(0, this.unacked);
        this.unacked = 0;
      }
    }
    if (fin && !this.remoteClosed) {
      this.remoteClosed = true;
      this.push(null);
    }
  }
}

/** Events: 'stream' (SpdyStream, after its headers are decoded), 'close', 'error'. */
export class SpdySession extends EventEmitter {
  private readonly transport: SpdyTransport;
  private readonly streams = new Map<number, SpdyStream>();
  private buf: Buffer = Buffer.alloc(0);
  private readonly inflate = zlib.createInflate({ dictionary: SPDY3_DICTIONARY });
  private readonly deflate = zlib.createDeflate({ dictionary: SPDY3_DICTIONARY });
  /** Frames are handled in order; header (de)compression is asynchronous. */
  private chain: Promise<void> = Promise.resolve();
  private outChain: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(transport: SpdyTransport) {
    super();
    this.transport = transport;
    this.inflate.on('error', (e) => this.fail(e));
    this.deflate.on('error', (e) => this.fail(e));
  }

  /** Bytes from the transport. */
  feed(data: Buffer): void {
    if (this.closed) return;
    this.buf = this.buf.length ? Buffer.concat([this.buf, data]) : data;
    while (this.buf.length >= 8) {
      const len = this.buf.readUIntBE(5, 3);
      if (this.buf.length < 8 + len) break;
      const frame = this.buf.subarray(0, 8 + len);
      this.buf = this.buf.subarray(8 + len);
      this.chain = this.chain.then(() => this.handle(frame)).catch((e) => this.fail(e));
    }
  }

  /** The transport ended: every stream ends. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const s of this.streams.values()) s.destroy();
    this.streams.clear();
    this.inflate.close();
    this.deflate.close();
    this.emit('close');
  }

  private fail(err: Error): void {
    if (this.closed) return;
    this.emit('error', err);
    this.sendGoaway(1);
    this.transport.end();
    this.close();
  }

  private async handle(frame: Buffer): Promise<void> {
    const control = (frame[0] & 0x80) !== 0;
    const flags = frame[4];
    const payload = frame.subarray(8);
    if (!control) {
      const id = frame.readUInt32BE(0) & 0x7fffffff;
      const s = this.streams.get(id);
      if (!s) {
        this.sendRst(id, 2 /* INVALID_STREAM */);
        return;
      }
      s.receive(payload, (flags & FLAG_FIN) !== 0);
      this.maybeForget(s);
      return;
    }
    const version = frame.readUInt16BE(0) & 0x7fff;
    const type = frame.readUInt16BE(2);
    if (version !== 3) throw new Error(`unsupported SPDY version ${version}`);
    switch (type) {
      case T.SYN_STREAM: {
        const id = payload.readUInt32BE(0) & 0x7fffffff;
        const headers = await this.decodeHeaders(payload.subarray(10));
        const s = new SpdyStream(this, id, headers);
        this.streams.set(id, s);
        s.once('close', () => this.streams.delete(id));
        this.emit('stream', s);
        if (flags & FLAG_FIN) s.receive(Buffer.alloc(0), true);
        return;
      }
      case T.HEADERS:
        // Extra headers on an open stream: decode to keep the compression context in step.
        await this.decodeHeaders(payload.subarray(4));
        return;
      case T.RST_STREAM: {
        const id = payload.readUInt32BE(0) & 0x7fffffff;
        const s = this.streams.get(id);
        if (s) {
          this.streams.delete(id);
          s.destroy();
        }
        return;
      }
      case T.PING:
        this.sendControl(T.PING, 0, payload);
        return;
      case T.GOAWAY:
        this.transport.end();
        this.close();
        return;
      default:
        // SETTINGS, WINDOW_UPDATE, SYN_REPLY (never sent to a server): nothing to do.
        return;
    }
  }

  private maybeForget(s: SpdyStream): void {
    if (s.remoteClosed && s.writableFinished) this.streams.delete(s.id);
  }

  private async decodeHeaders(block: Buffer): Promise<Record<string, string>> {
    const raw = await syncFlush(this.inflate, block);
    const n = raw.readUInt32BE(0);
    let off = 4;
    const headers: Record<string, string> = {};
    for (let i = 0; i < n; i++) {
      const nl = raw.readUInt32BE(off);
      const name = raw
        .subarray(off + 4, off + 4 + nl)
        .toString('latin1')
        .toLowerCase();
      off += 4 + nl;
      const vl = raw.readUInt32BE(off);
      // Several values of one header are NUL-separated; the first is what the port-forward protocol uses.
      headers[name] = raw
        .subarray(off + 4, off + 4 + vl)
        .toString('latin1')
        .split('\0')[0];
      off += 4 + vl;
    }
    return headers;
  }

  private encodeHeaders(headers: Record<string, string>): Promise<Buffer> {
    const entries = Object.entries(headers);
    const parts: Buffer[] = [];
    const n = Buffer.alloc(4);
    n.writeUInt32BE(entries.length, 0);
    parts.push(n);
    for (const [k, v] of entries) {
      for (const s of [k.toLowerCase(), v]) {
        const b = Buffer.from(s, 'latin1');
        const l = Buffer.alloc(4);
        l.writeUInt32BE(b.length, 0);
        parts.push(l, b);
      }
    }
    return syncFlush(this.deflate, Buffer.concat(parts));
  }

  private sendControl(type: number, flags: number, payload: Buffer): void {
    if (this.closed) return;
    const h = Buffer.alloc(8);
    h.writeUInt16BE(0x8003, 0);
    h.writeUInt16BE(type, 2);
    h.writeUInt32BE(payload.length, 4);
    h[4] = flags;
    this.transport.write(Buffer.concat([h, payload]));
  }

  /** @internal Replies are ordered with the data that follows them through `outChain`. */
  sendReply(id: number, headers: Record<string, string>): Promise<void> {
    this.outChain = this.outChain.then(async () => {
      const block = await this.encodeHeaders(headers);
      const p = Buffer.alloc(4);
      p.writeUInt32BE(id & 0x7fffffff, 0);
      this.sendControl(T.SYN_REPLY, 0, Buffer.concat([p, block]));
    });
    return this.outChain;
  }

  /** @internal */
  sendData(id: number, data: Buffer, fin: boolean): void {
    const write = () => {
      if (this.closed) return;
      // Frames carry at most 16 MiB; stay well below for fairness between streams.
      const max = 64 * 1024;
      let off = 0;
      do {
        const part = data.subarray(off, off + max);
        off += part.length;
        const h = Buffer.alloc(8);
        h.writeUInt32BE(id & 0x7fffffff, 0);
        h.writeUInt32BE(part.length, 4);
        h[4] = fin && off >= data.length ? FLAG_FIN : 0;
        this.transport.write(part.length ? Buffer.concat([h, part]) : h);
      } while (off < data.length);
    };
    // Data written after a reply must not overtake it while the reply's headers are being compressed.
    this.outChain = this.outChain.then(write);
  }

  /** @internal */
  sendRst(id: number, status: number): void {
    const p = Buffer.alloc(8);
    p.writeUInt32BE(id & 0x7fffffff, 0);
    p.writeUInt32BE(status, 4);
    this.outChain = this.outChain.then(() => this.sendControl(T.RST_STREAM, 0, p));
  }

  /** @internal */
  sendWindowUpdate(id: number, delta: number): void {
    const p = Buffer.alloc(8);
    p.writeUInt32BE(id & 0x7fffffff, 0);
    p.writeUInt32BE(delta & 0x7fffffff, 4);
    this.outChain = this.outChain.then(() => this.sendControl(T.WINDOW_UPDATE, 0, p));
  }

  private sendGoaway(status: number): void {
    const p = Buffer.alloc(8);
    p.writeUInt32BE(0, 0);
    p.writeUInt32BE(status, 4);
    this.sendControl(T.GOAWAY, 0, p);
  }
}

/**
 * Runs `input` through a session's zlib stream (SPDY header blocks share one compression context per direction) and
 * resolves with what it gives up to a sync flush.
 */
function syncFlush(stream: zlib.Inflate | zlib.Deflate, input: Buffer): Promise<Buffer> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const onData = (d: Buffer) => chunks.push(d);
    stream.on('data', onData);
    stream.write(input);
    stream.flush(zlib.constants.Z_SYNC_FLUSH, () => {
      stream.off('data', onData);
      resolve(Buffer.concat(chunks));
    });
  });
}
