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
  it('issues a 10-year CA and a 5-year serving certificate, kept across restarts', () => {
    const dir = tempDir('gwlab-pki-');
    const first = ensurePki(dir, 'life', ['127.1.0.1']);
    expect(validFor(first.caPem)).toBeGreaterThan(10 * YEAR_MS - 24 * 3600_000);
    expect(validFor(first.certPem)).toBeGreaterThan(5 * YEAR_MS - 24 * 3600_000);
    expect(new X509Certificate(first.certPem).checkIssued(new X509Certificate(first.caPem))).toBe(true);
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
});
