// The certificates the conformance tests make (certificates.ts) must be valid DER for OpenSSL, every time: a serial
// number written with a non-minimal INTEGER is refused by Node's X509Certificate ("illegal padding"), which the
// control plane uses to check a Secret, and made a test fail about once in 430 certificates. The serial is the lab
// PKI's (certificateSerial, pki-serial.test.ts); here, the certificates parse.
import { X509Certificate } from 'node:crypto';
import forge from 'node-forge';
import { describe, expect, it } from 'vitest';
import { caCert, rsaCert } from './certificates.ts';

describe('certificates for the conformance tests', () => {
  it('a CA and certificates it signs parse as X.509, each serial 16 bytes', () => {
    const ca = caCert();
    const caX = new X509Certificate(forge.pki.certificateToPem(ca.cert));
    for (let i = 0; i < 5; i++) {
      const x = new X509Certificate(rsaCert(['example.org'], 'client', ca).cert);
      expect(x.checkIssued(caX)).toBe(true);
      expect(x.serialNumber).toMatch(/^[0-7][0-9A-F]{31}$/);
    }
  });
});
