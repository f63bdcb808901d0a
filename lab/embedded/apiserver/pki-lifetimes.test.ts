// The lifetimes of the lab's long-lived credentials, as documented in lab/embedded/node/README.md ("Credentials a lab
// hands out"): a lab runs for days, and what is not renewed must outlive it by far. The CA is valid 10 years, the
// serving certificate 5 years (re-issued by the same CA when its SANs change), and both survive a restart unchanged.
import { X509Certificate } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../testing/tmp.ts';
import { ensurePki } from './pki.ts';

const YEAR_MS = 365 * 24 * 3600_000;
const validFor = (pem: string) => Date.parse(new X509Certificate(pem).validTo) - Date.now();

describe('lab PKI lifetimes', () => {
  it('issues a 10-year CA and a 5-year serving certificate, kept across restarts', async () => {
    const dir = tempDir('gwlab-pki-');
    const first = await ensurePki(dir, 'life', ['127.1.0.1']);
    expect(validFor(first.caPem)).toBeGreaterThan(10 * YEAR_MS - 24 * 3600_000);
    expect(validFor(first.certPem)).toBeGreaterThan(5 * YEAR_MS - 24 * 3600_000);
    expect(new X509Certificate(first.certPem).checkIssued(new X509Certificate(first.caPem))).toBe(true);
    // Signatures OpenSSL accepts: the CA's own, and the CA's on the serving certificate.
    expect(new X509Certificate(first.caPem).verify(new X509Certificate(first.caPem).publicKey)).toBe(true);
    expect(new X509Certificate(first.certPem).verify(new X509Certificate(first.caPem).publicKey)).toBe(true);
    const again = await ensurePki(dir, 'life', ['127.1.0.1']);
    expect(again).toEqual(first);
    // New SANs: a new serving certificate from the same CA; the admin token and signing key stay.
    const moved = await ensurePki(dir, 'life', ['127.2.0.1']);
    expect(moved.caPem).toBe(first.caPem);
    expect(moved.certPem).not.toBe(first.certPem);
    expect(new X509Certificate(moved.certPem).checkIssued(new X509Certificate(first.caPem))).toBe(true);
    expect(moved.adminToken).toBe(first.adminToken);
    expect(moved.saKeyPem).toBe(first.saKeyPem);
  });

  it("generates a new lab's keys on the thread pool: the event loop keeps turning meanwhile", async () => {
    const dir = tempDir('gwlab-pki-');
    let turned = false;
    const pending = ensurePki(dir, 'async');
    setImmediate(() => {
      turned = true;
    });
    const pki = await pending;
    // Three RSA keys take tens of milliseconds; generated synchronously they would have run before the callback.
    expect(turned).toBe(true);
    expect(new X509Certificate(pki.certPem).checkIssued(new X509Certificate(pki.caPem))).toBe(true);
    expect(pki.saKeyPem).toMatch(/^-----BEGIN PRIVATE KEY-----/);
  });
});
