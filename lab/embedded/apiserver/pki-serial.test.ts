// Certificate serial numbers (pki.ts certificateSerial, also the conformance tests' certificates): 16 random bytes,
// positive and minimally encoded, or OpenSSL ("asn1 encoding routines::illegal padding") and Go's x509 (kubectl)
// refuse the certificate. Clearing only the sign bit left a zero first byte in 1 of 128 draws.
import { describe, expect, it } from 'vitest';
import { certificateSerial } from './pki.ts';

describe('certificate serial numbers', () => {
  it('16 bytes, positive, no leading zero byte (minimal DER), over 20,000 draws', () => {
    const bad: string[] = [];
    for (let i = 0; i < 20_000; i++) {
      const hex = certificateSerial();
      const first = Number.parseInt(hex.slice(0, 2), 16);
      if (hex.length !== 32 || first < 0x01 || first > 0x7f) bad.push(hex);
    }
    expect(bad).toEqual([]);
  });
});
