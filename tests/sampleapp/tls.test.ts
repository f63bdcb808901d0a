// The sample application's --tls mode (system/sampleapp/main.ts, server.ts): HTTPS (HTTP/1.1 over node:https) with a
// certificate and key read from files as a kubernetes.io/tls Secret volume holds them (tls.crt, tls.key), the same
// httpbin behaviour as over HTTP (go-httpbin's url is https:// on a TLS connection, as its r.TLS check), and a missing
// file refused naming the flag and the path. Certificates from the conformance suite's generator
// (conformance/utils/certificates.ts), hence this file in tests/.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type tls from 'node:tls';
import forge from 'node-forge';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { caCert, rsaCert } from '../../conformance/utils/certificates.ts';
import { main } from '../../system/sampleapp/main.ts';
import { type SampleApp, startSampleApp } from '../../system/sampleapp/server.ts';
import { readTlsFiles, serviceArgs } from '../../system/shared/sample-service.ts';

let dir: string;
let app: SampleApp;
let caPem: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sampleapp-tls-'));
  const ca = caCert();
  caPem = forge.pki.certificateToPem(ca.cert);
  const pem = rsaCert(['sampleapp.internal'], 'server', ca);
  writeFileSync(join(dir, 'tls.crt'), pem.cert);
  writeFileSync(join(dir, 'tls.key'), pem.key);
  app = await startSampleApp({ tls: readTlsFiles(join(dir, 'tls.crt'), join(dir, 'tls.key')) });
});

afterAll(async () => {
  await app?.close();
  rmSync(dir, { recursive: true, force: true });
});

function get(path: string): Promise<{ status: number; body: string; protocol: string; sni: string }> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      `${app.url}${path}`,
      {
        ca: caPem,
        servername: 'sampleapp.internal',
        ALPNProtocols: ['http/1.1'],
        headers: { host: 'sampleapp.internal' },
        agent: false,
      } as https.RequestOptions,
      (res) => {
        let body = '';
        res.on('data', (d) => {
          body += d;
        });
        res.on('end', () => {
          const sock = res.socket as tls.TLSSocket;
          resolve({
            status: res.statusCode ?? 0,
            body,
            protocol: String(sock.alpnProtocol),
            sni: String(sock.getPeerCertificate().subjectaltname),
          });
        });
      },
    );
    req.on('error', reject);
    req.end();
  });
}

describe('sampleapp --tls', () => {
  it('serves the httpbin endpoints over HTTPS with the certificate from the files (verified against its CA)', async () => {
    expect(app.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const r = await get('/get?x=1');
    expect(r.status).toBe(200);
    expect(r.protocol).toBe('http/1.1');
    expect(r.sni).toBe('DNS:sampleapp.internal');
    expect(JSON.parse(r.body)).toMatchObject({ args: { x: ['1'] }, url: 'https://sampleapp.internal/get?x=1' });
    expect((await get('/status/418')).status).toBe(418);
  });

  it('takes --tls, --tls-cert and --tls-key (defaults: a Secret volume at /etc/tls)', () => {
    const a = serviceArgs(['--tls'], '', 8080, ['tls'], [], {
      'tls-cert': '/etc/tls/tls.crt',
      'tls-key': '/etc/tls/tls.key',
    });
    expect([...a!.flags]).toEqual(['tls']);
    expect(a!.strings).toEqual({ 'tls-cert': '/etc/tls/tls.crt', 'tls-key': '/etc/tls/tls.key' });
  });

  it('refuses to start when a file is missing, naming the flag and the path', async () => {
    await expect(
      main(['--tls', '--tls-cert', join(dir, 'nothere.crt'), '--tls-key', join(dir, 'tls.key')]),
    ).rejects.toThrow(`--tls-cert: cannot read ${join(dir, 'nothere.crt')}: ENOENT`);
  });
});
