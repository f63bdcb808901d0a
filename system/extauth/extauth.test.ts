// The ext-auth sample: its HTTP form and its gRPC form (envoy.service.auth.v3.Authorization/Check) decide alike.
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authorizationService } from './grpc.ts';
import { decide, type ExtAuth, RESULT_HEADER, startExtAuth } from './server.ts';

let server: ExtAuth;
const lines: string[] = [];

beforeAll(async () => {
  server = await startExtAuth({ log: (l) => lines.push(l) });
});
afterAll(async () => {
  await server.close();
});

function decisions() {
  return lines.map((l) => JSON.parse(l)).filter((r) => r.msg === 'allowed' || r.msg === 'denied');
}

describe('ext-auth sample', () => {
  it('allows a request carrying x-ext-authz: allow with 200, whatever the method and path', async () => {
    for (const [method, path] of [
      ['GET', '/headers'],
      ['POST', '/anything/deep?x=1'],
      ['DELETE', '/'],
    ]) {
      const r = await fetch(`${server.url}${path}`, { method, headers: { 'x-ext-authz': 'allow' } });
      expect(r.status, `${method} ${path}`).toBe(200);
      expect(r.headers.get(RESULT_HEADER)).toBe('allowed');
      expect(await r.text()).toBe('');
    }
  });

  it('denies with 403 when the header is missing or not exactly "allow"', async () => {
    const cases: [Record<string, string>, RegExp][] = [
      [{}, /header x-ext-authz is missing/],
      [{ 'x-ext-authz': 'deny' }, /header x-ext-authz is "deny", not allow/],
      [{ 'x-ext-authz': 'Allow' }, /is "Allow", not allow/],
      [{ 'x-ext-authz': '' }, /is "", not allow/],
    ];
    for (const [headers, reason] of cases) {
      const r = await fetch(`${server.url}/headers`, { headers });
      expect(r.status).toBe(403);
      expect(r.headers.get(RESULT_HEADER)).toBe('denied');
      expect(r.headers.get('content-type')).toBe('text/plain; charset=utf-8');
      expect(await r.text()).toMatch(reason);
    }
  });

  it('logs each decision as a JSON line with the request and the reason', async () => {
    lines.length = 0;
    await fetch(`${server.url}/a?b=c`, { headers: { 'x-ext-authz': 'allow', host: 'www.example.com' } });
    await fetch(`${server.url}/d`, { method: 'PUT', body: 'x' });
    expect(decisions()).toEqual([
      expect.objectContaining({
        level: 'info',
        component: 'extauth',
        msg: 'allowed',
        method: 'GET',
        path: '/a?b=c',
        'x-ext-authz': 'allow',
        reason: 'header x-ext-authz is allow',
        client_ip: '127.0.0.1',
      }),
      expect.objectContaining({ msg: 'denied', method: 'PUT', path: '/d', reason: 'header x-ext-authz is missing' }),
    ]);
  });

  it('treats a repeated header (joined by the parser) as not allowed', () => {
    expect(decide({ headers: { 'x-ext-authz': 'allow, allow' } }).allowed).toBe(false);
    expect(decide({ headers: { 'x-ext-authz': 'allow' } }).allowed).toBe(true);
  });

  it('can run silent and on a fixed port', async () => {
    const probe = await startExtAuth({ log: false });
    const port = probe.port;
    await probe.close();
    const fixed = await startExtAuth({ port, log: false });
    try {
      expect(fixed.port).toBe(port);
      expect((await fetch(`${fixed.url}/`, { headers: { 'x-ext-authz': 'allow' } })).status).toBe(200);
    } finally {
      await fixed.close();
    }
  });
});

describe('ext-auth sample over gRPC (Authorization/Check)', () => {
  let g: ExtAuth;
  let client: grpc.Client & Record<string, any>;
  beforeAll(async () => {
    g = await startExtAuth({ log: false, grpcPort: 0 });
    const Ctor = grpc.makeGenericClientConstructor(authorizationService(), 'Authorization');
    client = new Ctor(`127.0.0.1:${g.grpcPort}`, grpc.credentials.createInsecure()) as any;
  });
  afterAll(async () => {
    client?.close();
    await g?.close();
  });
  const check = (headers: Record<string, string>) =>
    new Promise<any>((resolve, reject) =>
      client.Check(
        { attributes: { request: { http: { method: 'GET', path: '/x', host: 'h', headers } } } },
        (e: Error | null, r: any) => (e ? reject(e) : resolve(r)),
      ),
    );

  it('allows x-ext-authz: allow with status OK and the result header for the upstream', async () => {
    const r = await check({ ':path': '/x', 'x-ext-authz': 'allow' });
    expect(r.status.code).toBe(0);
    expect(r.ok_response.headers).toEqual([
      expect.objectContaining({ header: expect.objectContaining({ key: RESULT_HEADER, value: 'allowed' }) }),
    ]);
  });

  it('denies anything else with PERMISSION_DENIED, a 403 DeniedResponse and the HTTP form’s body', async () => {
    const r = await check({ 'x-ext-authz': 'deny' });
    expect(r.status.code).toBe(grpc.status.PERMISSION_DENIED);
    expect(r.denied_response.status.code).toBe('Forbidden');
    expect(r.denied_response.body).toMatch(/^denied by ext_authz: header x-ext-authz is "deny", not allow/);
    const missing = await check({});
    expect(missing.denied_response.body).toMatch(/header x-ext-authz is missing/);
  });
});
