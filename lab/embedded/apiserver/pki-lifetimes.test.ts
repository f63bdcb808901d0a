// The lifetimes of the lab's long-lived credentials, as documented in lab/embedded/node/README.md ("Credentials a lab
// hands out"): a lab runs for days, and what is not renewed must outlive it by far. The CA is valid 10 years, the
// serving certificate 5 years (re-issued by the same CA when its SANs change), and both survive a restart unchanged.
// New labs' keys are ECDSA P-256; an older lab's RSA CA keeps signing.
import { createPrivateKey, generateKeyPairSync, X509Certificate } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import forge from 'node-forge';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../testing/tmp.ts';
import { ensurePki } from './pki.ts';

const YEAR_MS = 365 * 24 * 3600_000;
const validFor = (pem: string) => Date.parse(new X509Certificate(pem).validTo) - Date.now();

describe('lab PKI lifetimes', () => {
  it('issues a 10-year CA and a 5-year serving certificate, kept across restarts', () => {
    const dir = tempDir('gwlab-pki-');
    const first = ensurePki(dir, 'life', ['127.1.0.1']);
    expect(validFor(first.caPem)).toBeGreaterThan(10 * YEAR_MS - 24 * 3600_000);
    expect(validFor(first.certPem)).toBeGreaterThan(5 * YEAR_MS - 24 * 3600_000);
    expect(new X509Certificate(first.certPem).checkIssued(new X509Certificate(first.caPem))).toBe(true);
    // Signatures OpenSSL accepts: the CA's own, and the CA's on the serving certificate.
    expect(new X509Certificate(first.caPem).verify(new X509Certificate(first.caPem).publicKey)).toBe(true);
    expect(new X509Certificate(first.certPem).verify(new X509Certificate(first.caPem).publicKey)).toBe(true);
    const again = ensurePki(dir, 'life', ['127.1.0.1']);
    expect(again).toEqual(first);
    // New SANs: a new serving certificate from the same CA; the admin token and signing key stay.
    const moved = ensurePki(dir, 'life', ['127.2.0.1']);
    expect(moved.caPem).toBe(first.caPem);
    expect(moved.certPem).not.toBe(first.certPem);
    expect(new X509Certificate(moved.certPem).checkIssued(new X509Certificate(first.caPem))).toBe(true);
    expect(moved.adminToken).toBe(first.adminToken);
    expect(moved.saKeyPem).toBe(first.saKeyPem);
  });

  it("makes ECDSA P-256 keys for a new lab, and keeps signing with an older lab's RSA CA", () => {
    const dir = tempDir('gwlab-pki-');
    const pki = ensurePki(dir, 'ec');
    for (const pem of [pki.caPem, pki.certPem]) {
      const key = new X509Certificate(pem).publicKey;
      expect([key.asymmetricKeyType, key.asymmetricKeyDetails?.namedCurve]).toEqual(['ec', 'prime256v1']);
    }
    expect(createPrivateKey(pki.saKeyPem).asymmetricKeyType).toBe('ec');
    // A lab made before this change has an RSA CA (made here with forge's own builder): a new serving certificate
    // (new SANs) is signed by it, with RSA.
    const old = tempDir('gwlab-pki-');
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const key = forge.pki.privateKeyFromPem(privateKey.export({ type: 'pkcs8', format: 'pem' }) as string);
    const ca = forge.pki.createCertificate();
    ca.publicKey = forge.pki.setRsaPublicKey(key.n, key.e);
    ca.serialNumber = '01';
    ca.validity.notAfter = new Date(Date.now() + YEAR_MS);
    ca.setSubject([{ name: 'commonName', value: 'gwlab-old-ca' }]);
    ca.setIssuer([{ name: 'commonName', value: 'gwlab-old-ca' }]);
    ca.setExtensions([{ name: 'basicConstraints', cA: true, critical: true }]);
    ca.sign(key, forge.md.sha256.create());
    const rsaCa = new X509Certificate(forge.pki.certificateToPem(ca));
    writeFileSync(join(old, 'ca.crt'), rsaCa.toString());
    writeFileSync(join(old, 'ca.key'), privateKey.export({ type: 'pkcs8', format: 'pem' }));
    const served = ensurePki(old, 'old', ['127.3.0.1']);
    expect(new X509Certificate(served.certPem).checkIssued(rsaCa)).toBe(true);
    expect(new X509Certificate(served.certPem).verify(rsaCa.publicKey)).toBe(true);
  });
});
