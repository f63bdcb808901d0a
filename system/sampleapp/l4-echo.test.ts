// The sample application's TCP and UDP echo servers: bytes back, the pod name after the client's half-close (TCP);
// "<name>:<datagram>" (UDP).
import dgram from 'node:dgram';
import net from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type L4Echo, startL4Echo } from './l4-echo.ts';

let echo: L4Echo;
beforeAll(async () => {
  echo = await startL4Echo({ host: '127.0.0.1', tcpPort: 0, udpPort: 0, name: 'pod-1' });
});
afterAll(() => echo?.close());

it('echoes TCP bytes, then its name once the client half-closed', async () => {
  const got = await new Promise<string>((resolve, reject) => {
    const c = net.connect({ host: '127.0.0.1', port: echo.tcpPort!, allowHalfOpen: true }, () => c.end('hello'));
    let d = '';
    c.on('data', (x) => (d += x));
    c.on('close', () => resolve(d));
    c.on('error', reject);
  });
  expect(got).toBe('hello\npod-1');
});

it('answers a UDP datagram with its name', async () => {
  const c = dgram.createSocket('udp4');
  try {
    const got = await new Promise<string>((resolve) => {
      c.once('message', (m) => resolve(m.toString()));
      c.send('ping', echo.udpPort!, '127.0.0.1');
    });
    expect(got).toBe('pod-1:ping');
  } finally {
    c.close();
  }
});
