// The echo's TCP and UDP modes against what upstream's echo-basic answers (Gateway API v1.6.1
// conformance/echo-basic/tcpserver/tcpserver.go and udpechoserver/udpechoserver.go; the conformance helpers that read
// them: conformance/utils/tcp/tcp.go WaitForValidTCPResponse, utils/udp/udp.go ExpectEchoResponseFromBackend).
import { createSocket } from 'node:dgram';
import { connect, type Socket } from 'node:net';
import { createInterface } from 'node:readline';
import tls from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { selfSigned } from '../shared/testing/certs.ts';
import { type L4Echo, startTcpEcho, startUdpEcho, WELCOME_MESSAGE } from './l4.ts';

const context = { namespace: 'gateway-conformance-infra', ingress: '', service: 'tcp-backend', pod: 'tcp-backend-1-x' };

describe('TCP echo (TCP_ECHO_SERVER)', () => {
  let echo: L4Echo;
  beforeAll(async () => {
    echo = await startTcpEcho({ host: '127.0.0.1', port: 0, context });
  });
  afterAll(() => echo.close());

  it('welcomes, then answers PING, IS_TLS and TEST line by line, ignoring other lines', async () => {
    const sock: Socket = connect(echo.port, '127.0.0.1');
    try {
      const lines = createInterface({ input: sock })[Symbol.asyncIterator]();
      const next = async () => (await lines.next()).value as string;
      expect(`${await next()}\n`).toBe(WELCOME_MESSAGE);
      sock.write('NOISE\nPING\n');
      expect(await next()).toBe('PONG');
      sock.write('IS_TLS\r\n');
      expect(await next()).toBe('false');
      sock.write('TEST\n');
      expect(JSON.parse(await next())).toEqual({
        namespace: 'gateway-conformance-infra',
        ingress: '',
        service: 'tcp-backend',
        pod: 'tcp-backend-1-x',
        tcpport: String(echo.port),
        tlsport: '8443',
        isTLS: false,
      });
    } finally {
      sock.destroy();
    }
  });
});

describe('TCP echo over TLS (TCP_ECHO_SERVER with TLS_SERVER_CERT, TLS_SERVER_PRIV_KEY)', () => {
  let echo: L4Echo & { tlsPort?: number };
  const pem = selfSigned('abc.example.com');
  beforeAll(async () => {
    echo = await startTcpEcho({
      host: '127.0.0.1',
      port: 0,
      context,
      tls: { cert: Buffer.from(pem.cert), key: Buffer.from(pem.key), port: 0 },
    });
  });
  afterAll(() => echo.close());

  it('serves the same lines over TLS, IS_TLS true and TEST with the TLS assertions (the SNI seen)', async () => {
    const sock = tls.connect({ host: '127.0.0.1', port: echo.tlsPort!, servername: 'abc.example.com', ca: pem.cert });
    try {
      const lines = createInterface({ input: sock })[Symbol.asyncIterator]();
      const next = async () => (await lines.next()).value as string;
      expect(`${await next()}\n`).toBe(WELCOME_MESSAGE);
      sock.write('IS_TLS\n');
      expect(await next()).toBe('true');
      sock.write('TEST\n');
      const got = JSON.parse(await next());
      expect(got).toMatchObject({
        ...context,
        tcpport: String(echo.port),
        tlsport: String(echo.tlsPort),
        isTLS: true,
        tls: { version: 'TLS 1.3', serverName: 'abc.example.com', cipherSuite: expect.stringMatching(/^TLS_/) },
      });
    } finally {
      sock.destroy();
    }
  });
});

describe('UDP echo (UDP_ECHO_SERVER)', () => {
  let echo: L4Echo;
  const logged: string[] = [];
  beforeAll(async () => {
    echo = await startUdpEcho({ host: '127.0.0.1', port: 0, context, log: (l) => logged.push(l) });
  });
  afterAll(() => echo.close());

  it('answers each datagram to its sender with the request and the pod context', async () => {
    const sock = createSocket('udp4');
    try {
      const reply = new Promise<Buffer>((resolve) => sock.once('message', resolve));
      sock.send('gateway-api-conformance-udp-echo', echo.port, '127.0.0.1');
      expect(JSON.parse((await reply).toString())).toEqual({ request: 'gateway-api-conformance-udp-echo', ...context });
      expect(logged[0]).toMatch(/^Received UDP gateway-api-conformance-udp-echo from 127\.0\.0\.1:\d+$/);
    } finally {
      sock.close();
    }
  });
});
