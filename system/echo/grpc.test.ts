// The echo's gRPC mode against upstream's own test of its server (Gateway API v1.6.1
// conformance/echo-basic/grpc/grpcechoserver_test.go): Echo and EchoTwo answer with the fully qualified method, the
// authority the client dialled, the pod context and the request's headers (a `foo` header echoed once); EchoThree is
// UNIMPLEMENTED; with a certificate the same service is served over TLS (ALPN h2) and says so in tls_assertions.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rsaCert } from '../../conformance/utils/certificates.ts';
import { type EchoResponse, type GrpcEcho, grpcEchoService, startGrpcEcho } from './grpc.ts';

const context = { namespace: 'ns-x1', ingress: 'ing-x2', service: 'svc-x3', pod: 'pod-x4' };

function call(client: grpc.Client, method: string, md: grpc.Metadata): Promise<EchoResponse> {
  return new Promise((resolve, reject) => {
    (client as any)[method]({}, md, { deadline: Date.now() + 10_000 }, (err: Error | null, res: EchoResponse) =>
      err ? reject(err) : resolve(res),
    );
  });
}

describe('echo GRPC_ECHO_SERVER (upstream echo-basic grpc)', () => {
  let echo: GrpcEcho;
  const dir = mkdtempSync(join(tmpdir(), 'gwlab-grpcecho-'));
  const pem = rsaCert(['grpc.example.com'], 'server');
  const clients: grpc.Client[] = [];
  beforeAll(async () => {
    writeFileSync(join(dir, 'crt'), pem.cert);
    writeFileSync(join(dir, 'key'), pem.key);
    echo = await startGrpcEcho({
      host: '127.0.0.1',
      port: 0,
      httpsPort: 0,
      tlsCert: join(dir, 'crt'),
      tlsKey: join(dir, 'key'),
      context,
    });
  });
  afterAll(async () => {
    for (const c of clients) c.close();
    await echo?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const plaintext = () => {
    const Client = grpcEchoService();
    const c = new Client(`127.0.0.1:${echo.port}`, grpc.credentials.createInsecure());
    clients.push(c);
    return c;
  };

  for (const method of ['Echo', 'EchoTwo']) {
    it(`${method}: method, authority, pod context and the request's headers`, async () => {
      const md = new grpc.Metadata();
      md.set('foo', 'bar-42');
      const res = await call(plaintext(), method, md);
      const a = res.assertions!;
      expect(a.fullyQualifiedMethod).toBe(`/gateway_api_conformance.echo_basic.grpcecho.GrpcEcho/${method}`);
      expect(a.authority).toBe(`127.0.0.1:${echo.port}`);
      expect(a.context).toEqual({ namespace: 'ns-x1', ingress: 'ing-x2', serviceName: 'svc-x3', pod: 'pod-x4' });
      expect(a.headers.filter((h) => h.key === 'foo').map((h) => h.value)).toEqual(['bar-42']);
      expect(a.headers).toContainEqual({ key: ':authority', value: `127.0.0.1:${echo.port}` });
      expect(a.tlsAssertions).toBeNull();
      expect(res.request).toEqual({});
    });
  }

  it('EchoThree is UNIMPLEMENTED', async () => {
    await expect(call(plaintext(), 'EchoThree', new grpc.Metadata())).rejects.toMatchObject({
      code: grpc.status.UNIMPLEMENTED,
    });
  });

  it('serves the same service over TLS with the given certificate', async () => {
    const Client = grpcEchoService();
    const creds = grpc.credentials.createSsl(Buffer.from(pem.cert));
    const c = new Client(`127.0.0.1:${echo.https}`, creds, {
      'grpc.ssl_target_name_override': 'grpc.example.com',
      'grpc.default_authority': 'grpc.example.com',
    });
    clients.push(c);
    const res = await call(c, 'Echo', new grpc.Metadata());
    expect(res.assertions!.authority).toBe('grpc.example.com');
    expect(res.assertions!.tlsAssertions).toMatchObject({ negotiatedProtocol: 'h2', peerCertificates: [] });
  });
});
