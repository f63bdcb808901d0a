import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectHttpEventually, send } from './http.ts';

describe('toolkit: HTTP with eventual consistency', () => {
  let server: http.Server;
  let url: string;
  let calls = 0;
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      calls++;
      // The route "appears" after the fifth request, as a gateway's config would after a push.
      const ready = calls > 5 && req.headers.host === 'www.example.com';
      res.writeHead(ready ? 200 : 404, { 'content-type': 'application/json', server: 'envoy' });
      res.end(JSON.stringify({ host: req.headers.host }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => server.close());

  it('sends the Host header and parses JSON', async () => {
    const res = await send({ url, path: '/headers', host: 'a.example' });
    expect(res.json).toEqual({ host: 'a.example' });
  });

  it('retries until three consecutive successes', async () => {
    calls = 0;
    const res = await expectHttpEventually(
      { url, host: 'www.example.com' },
      { status: 200, headers: { server: 'envoy' } },
    );
    expect(res.status).toBe(200);
    expect(calls).toBe(8);
  });

  it('times out naming the last mismatch', async () => {
    await expect(
      expectHttpEventually({ url, host: 'other.example' }, { status: 200 }, { timeoutMs: 300 }),
    ).rejects.toThrow(/status 404, want 200/);
  });
});
