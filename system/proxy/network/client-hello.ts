// The TLS ClientHello read without terminating TLS, as Envoy's tls_inspector listener filter reads it
// (source/extensions/filters/listener/tls_inspector/tls_inspector.cc): is the connection TLS at all, and if so its
// SNI host name (server_name extension, RFC 6066 section 3) and ALPN protocols (RFC 7301), from the first bytes the
// client sent (handshake records, RFC 8446 section 5.1; a ClientHello may span several records). Pure: the caller
// feeds what it has read so far and reads more while the answer is `more`. Envoy's limit applies: a ClientHello over
// 64 KiB (TLS_MAX_CLIENT_HELLO) is `too-large`.

export const MAX_CLIENT_HELLO = 64 * 1024;

export type ClientHello =
  | { state: 'more' }
  | { state: 'not-tls' }
  | { state: 'too-large' }
  | { state: 'tls'; serverName?: string; alpn?: string[]; bytes: number };

const HANDSHAKE = 0x16;
const CLIENT_HELLO = 0x01;
const EXT_SERVER_NAME = 0x0000;
const EXT_ALPN = 0x0010;

/** What `data` (the first bytes of a connection) says. */
export function parseClientHello(data: Buffer): ClientHello {
  // The handshake message, reassembled from the records that carry it.
  const parts: Buffer[] = [];
  let have = 0;
  let need = -1;
  let off = 0;
  while (need < 0 || have < need) {
    if (data.length < off + 5) return data.length >= MAX_CLIENT_HELLO ? { state: 'too-large' } : { state: 'more' };
    const type = data[off];
    const major = data[off + 1];
    if (type !== HANDSHAKE || major !== 3) return { state: 'not-tls' };
    const len = data.readUInt16BE(off + 3);
    if (len === 0 || len > 16384 + 2048) return { state: 'not-tls' };
    const end = off + 5 + len;
    if (data.length < end) return end > MAX_CLIENT_HELLO ? { state: 'too-large' } : { state: 'more' };
    parts.push(data.subarray(off + 5, end));
    have += len;
    off = end;
    if (need < 0) {
      const msg = Buffer.concat(parts);
      if (msg.length < 4) continue;
      if (msg[0] !== CLIENT_HELLO) return { state: 'not-tls' };
      need = 4 + msg.readUIntBE(1, 3);
      if (need > MAX_CLIENT_HELLO) return { state: 'too-large' };
    }
  }
  const hello = Buffer.concat(parts).subarray(4, need);
  const parsed = readHello(hello);
  return parsed ? { state: 'tls', ...parsed, bytes: off } : { state: 'not-tls' };
}

/** The ClientHello body: version, random, session id, cipher suites, compression methods, then the extensions. */
function readHello(b: Buffer): { serverName?: string; alpn?: string[] } | undefined {
  let p = 2 + 32;
  if (b.length < p + 1) return undefined;
  p += 1 + b[p];
  if (b.length < p + 2) return undefined;
  p += 2 + b.readUInt16BE(p);
  if (b.length < p + 1) return undefined;
  p += 1 + b[p];
  if (p === b.length) return {};
  if (b.length < p + 2) return undefined;
  const end = p + 2 + b.readUInt16BE(p);
  if (end > b.length) return undefined;
  p += 2;
  const out: { serverName?: string; alpn?: string[] } = {};
  while (p + 4 <= end) {
    const type = b.readUInt16BE(p);
    const len = b.readUInt16BE(p + 2);
    const ext = b.subarray(p + 4, p + 4 + len);
    p += 4 + len;
    if (type === EXT_SERVER_NAME) {
      const name = serverName(ext);
      if (name) out.serverName = name;
    } else if (type === EXT_ALPN) {
      const alpn = protocols(ext);
      if (alpn.length) out.alpn = alpn;
    }
  }
  return p === end ? out : undefined;
}

/** server_name: a list of (type, name); the host_name entry (type 0). */
function serverName(ext: Buffer): string | undefined {
  if (ext.length < 2) return undefined;
  const end = Math.min(ext.length, 2 + ext.readUInt16BE(0));
  for (let p = 2; p + 3 <= end; ) {
    const type = ext[p];
    const len = ext.readUInt16BE(p + 1);
    if (type === 0) return ext.subarray(p + 3, p + 3 + len).toString('latin1');
    p += 3 + len;
  }
  return undefined;
}

/** application_layer_protocol_negotiation: a list of length-prefixed names. */
function protocols(ext: Buffer): string[] {
  const out: string[] = [];
  if (ext.length < 2) return out;
  const end = Math.min(ext.length, 2 + ext.readUInt16BE(0));
  for (let p = 2; p < end; ) {
    const len = ext[p];
    if (!len) break;
    out.push(ext.subarray(p + 1, p + 1 + len).toString('latin1'));
    p += 1 + len;
  }
  return out;
}
