// The ClientHello reader against real ClientHellos (node:tls clients, OpenSSL's): SNI and ALPN found, absent when
// not sent, `more` until the whole message is in, `not-tls` for plaintext (an HTTP/1.1 request), `too-large` past
// Envoy's 64 KiB limit (tls_inspector.cc TLS_MAX_CLIENT_HELLO).
import net from 'node:net';
import tls from 'node:tls';
import { describe, expect, it } from 'vitest';
import { MAX_CLIENT_HELLO, parseClientHello } from './client-hello.ts';

/** The first bytes a node:tls client sends (its ClientHello), captured by a plain TCP server. */
async function captureHello(o: tls.ConnectionOptions): Promise<Buffer> {
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  try {
    return await new Promise<Buffer>((resolve) => {
      server.once('connection', (c) => {
        c.once('data', (d) => {
          resolve(d);
          c.destroy();
        });
      });
      const s = tls.connect({ host: '127.0.0.1', port: (server.address() as net.AddressInfo).port, ...o });
      s.on('error', () => {});
    });
  } finally {
    server.close();
  }
}

describe('parseClientHello', () => {
  it('reads the SNI and ALPN of a ClientHello', async () => {
    const hello = await captureHello({ servername: 'abc.example.com', ALPNProtocols: ['h2', 'http/1.1'] });
    expect(parseClientHello(hello)).toEqual({
      state: 'tls',
      serverName: 'abc.example.com',
      alpn: ['h2', 'http/1.1'],
      bytes: hello.length,
    });
  });

  it('no SNI, no ALPN: neither reported', async () => {
    const hello = await captureHello({ servername: '' });
    expect(parseClientHello(hello)).toEqual({ state: 'tls', bytes: hello.length });
  });

  it('asks for more until the whole ClientHello is in', async () => {
    const hello = await captureHello({ servername: 'abc.example.com' });
    for (const n of [0, 3, 5, 40, hello.length - 1])
      expect(parseClientHello(hello.subarray(0, n))).toEqual({ state: 'more' });
  });

  it('plaintext is not TLS', () => {
    expect(parseClientHello(Buffer.from('GET / HTTP/1.1\r\nhost: a\r\n\r\n'))).toEqual({ state: 'not-tls' });
  });

  it('a ClientHello announced over 64 KiB is too large', () => {
    const record = Buffer.from([0x16, 3, 1, 0x40, 0x00, 0x01, 0x01, 0x00, 0x00]);
    expect(MAX_CLIENT_HELLO).toBe(65536);
    expect(parseClientHello(Buffer.concat([record, Buffer.alloc(0x4000 - 4)]))).toEqual({ state: 'too-large' });
  });
});
