// The echo backend against what upstream's echo-basic answers (Gateway API v1.6.1 conformance/echo-basic/
// echo-basic.go and its echo-basic_test.go): the JSON fields the conformance suite reads, header names in Go's
// canonical form without Host, X-Echo-Set-Header, /status/<code>, /retry/, `delay`, h2c with prior knowledge and
// the 400 for HTTP/1.1 there, HTTPS with the tls block.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http2 from 'node:http2';
import { Agent as HttpsAgent, request as httpsRequest, type RequestOptions } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { selfSigned as selfSignedCert } from '../shared/testing/certs.ts';
import { canonicalHeaderKey, echoSetHeaders, parseGoDuration, statusCodeOf } from './response.ts';
import { type EchoServer, startEcho } from './server.ts';

const ctx = { namespace: 'gateway-conformance-infra', ingress: '', service: '', pod: 'infra-backend-v1-abc' };
const dispatcher = new Agent({ connect: { rejectUnauthorized: false } });

function selfSigned(dir: string): { cert: string; key: string } {
  const issued = selfSignedCert('echo.example.com');
  const cert = join(dir, 'crt');
  const key = join(dir, 'key');
  writeFileSync(cert, issued.cert);
  writeFileSync(key, issued.key);
  return { cert, key };
}

describe('echo backend (upstream echo-basic shape)', () => {
  let echo: EchoServer;
  const dir = mkdtempSync(join(tmpdir(), 'gwlab-echo-'));
  beforeAll(async () => {
    const { cert, key } = selfSigned(dir);
    echo = await startEcho({ httpPort: 0, h2cPort: 0, httpsPort: 0, tlsCert: cert, tlsKey: key, context: ctx });
  });
  afterAll(async () => {
    await echo?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('echoes the request as upstream JSON with Go-canonical header names and no Host', async () => {
    const res = await request(`http://127.0.0.1:${echo.http}/a//b?x=1`, {
      headers: { host: 'example.com', 'x-foo-bar': 'v1', 'X-ECHO-Set-Header': 'X-Out:one,X-Out:two' },
      dispatcher,
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.headers['x-out']).toBe('one,two');
    const body = (await res.body.json()) as Record<string, any>;
    expect(Object.keys(body)).toEqual([
      'path',
      'host',
      'method',
      'proto',
      'headers',
      'httpPort',
      'namespace',
      'ingress',
      'service',
      'pod',
    ]);
    expect(body).toMatchObject({ path: '/a//b?x=1', host: 'example.com', method: 'GET', proto: 'HTTP/1.1' });
    expect(body).toMatchObject({ namespace: ctx.namespace, pod: ctx.pod, httpPort: '0' });
    expect(body.headers['X-Foo-Bar']).toEqual(['v1']);
    expect(body.headers.Host).toBeUndefined();
  });

  it('answers /status/<code>, /health, and fails /retry/ attempts until succeedAfter', async () => {
    const get = (p: string) => request(`http://127.0.0.1:${echo.http}${p}`, { dispatcher });
    expect((await get('/status/418')).statusCode).toBe(418);
    expect((await get('/status/abc')).statusCode).toBe(400);
    expect(await (await get('/health')).body.text()).toBe('OK');
    const retry = '/retry/?uuid=u1&succeedAfter=2&responseCode=503';
    expect((await get(retry)).statusCode).toBe(503);
    expect((await get(retry)).statusCode).toBe(503);
    expect((await get(retry)).statusCode).toBe(200);
    await expect(get('/retry/?uuid=u2&succeedAfter=1')).rejects.toThrow();
  });

  it('serves h2c with prior knowledge, and refuses HTTP/1.1 there as upstream does', async () => {
    const session = http2.connect(`http://127.0.0.1:${echo.h2c}`);
    const body = await new Promise<any>((resolve, reject) => {
      const s = session.request({ ':path': '/h2', ':authority': 'h2.example.com' });
      let text = '';
      s.on('data', (c) => (text += c));
      s.on('end', () => resolve(JSON.parse(text)));
      s.on('error', reject);
    });
    session.close();
    expect(body).toMatchObject({ path: '/h2', host: 'h2.example.com', proto: 'HTTP/2.0' });
    const h1 = await request(`http://127.0.0.1:${echo.h2c}/`, { dispatcher });
    expect(h1.statusCode).toBe(400);
    expect(await h1.body.text()).toBe('Expected h2c request');
  });

  it('serves HTTPS with the tls block (version, serverName, cipher suite)', async () => {
    // node:https with the SNI and Host a client of tls.example.com sends (no curl: a fresh machine has Node and kubectl only).
    const options: RequestOptions = {
      host: '127.0.0.1',
      port: echo.https!,
      path: '/t',
      servername: 'tls.example.com',
      headers: { host: `tls.example.com:${echo.https}` },
      rejectUnauthorized: false,
      agent: new HttpsAgent({ ALPNProtocols: ['http/1.1'] }),
      timeout: 10_000,
    };
    const stdout = await new Promise<string>((ok, fail) => {
      const req = httpsRequest(options, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c) => {
          text += c;
        });
        res.on('end', () => ok(text));
      });
      req.on('error', fail);
      req.end();
    });
    const body = JSON.parse(stdout);
    expect(body.tls).toMatchObject({
      version: 'TLSv1.3',
      serverName: 'tls.example.com',
      negotiatedProtocol: 'http/1.1',
    });
    expect(body.tls.cipherSuite).toMatch(/^TLS_/);
  });

  it('echoes WebSocket frames on /ws (text as text, binary as binary), over HTTP and HTTPS, as echo-basic wsHandler', async () => {
    const roundTrip = async (url: string) => {
      const ws = new WebSocket(url, { origin: 'ws://gateway/t', rejectUnauthorized: false });
      await new Promise((ok, fail) => ws.once('open', ok).once('error', fail));
      const next = () =>
        new Promise<{ data: Buffer; binary: boolean }>((ok) =>
          ws.once('message', (data, binary) => ok({ data: data as Buffer, binary })),
        );
      ws.send('Websocket Support!');
      const text = await next();
      ws.send(Buffer.from([1, 2, 3, 4, 5, 6, 7]), { binary: true });
      const bin = await next();
      ws.close();
      return { text, bin };
    };
    for (const url of [`ws://127.0.0.1:${echo.http}/ws`, `wss://127.0.0.1:${echo.https}/ws`]) {
      const { text, bin } = await roundTrip(url);
      expect({ text: text.data.toString(), binary: text.binary }).toEqual({
        text: 'Websocket Support!',
        binary: false,
      });
      expect({ bytes: [...bin.data], binary: bin.binary }).toEqual({ bytes: [1, 2, 3, 4, 5, 6, 7], binary: true });
    }
    // golang.org/x/net/websocket.Handler: no Origin is a 403; a plain GET of /ws a 400.
    const noOrigin = new WebSocket(`ws://127.0.0.1:${echo.http}/ws`);
    noOrigin.on('error', () => {});
    const refused = await new Promise<number>((ok) =>
      noOrigin.once('unexpected-response', (q, r) => {
        q.destroy();
        ok(r.statusCode!);
      }),
    );
    expect(refused).toBe(403);
    expect((await request(`http://127.0.0.1:${echo.http}/ws`, { dispatcher })).statusCode).toBe(400);
  });

  it('reads Go durations, canonical keys, set-header lists and status paths as upstream', () => {
    expect(parseGoDuration('1.5s')).toBe(1500);
    expect(parseGoDuration('2m30s')).toBe(150_000);
    expect(() => parseGoDuration('5')).toThrow(/invalid duration/);
    expect(canonicalHeaderKey('x-forwarded-for')).toBe('X-Forwarded-For');
    expect(canonicalHeaderKey('has space')).toBe('has space');
    expect(echoSetHeaders(['a:1, b:2', 'a:3'])).toEqual({ a: '1,3', b: '2' });
    expect(statusCodeOf('/status/204')).toBe(204);
    expect(statusCodeOf('/status/204?x')).toBe(400);
  });
});
