// The TLS client's server name check is Go's crypto/x509 VerifyHostname (matchHostnames in verify.go, Go 1.22), as
// upstream's client does it, not Node's: `*.org` covers `example.org` (Node refuses a wildcard over two labels), a
// wildcard covers one label only and only as the leftmost one, names compare case-insensitively, IPs against IP SANs.
import type { PeerCertificate } from 'node:tls';
import { describe, expect, it } from 'vitest';
import { checkServerIdentity } from './roundtrip.ts';

const cert = (sans: string) => ({ subjectaltname: sans }) as PeerCertificate;

describe('checkServerIdentity (Go crypto/x509 rules)', () => {
  const suite = cert('DNS:*, DNS:*.org, DNS:*.wildcard.org');
  it.each([
    ['example.org', true],
    ['Second-Example.ORG', true],
    ['x.wildcard.org', true],
    ['a.b.wildcard.org', false],
    // Go's matchHostnames: `*` alone is a one-label pattern, and its wildcard label matches any label.
    ['org', true],
    ['example.com', false],
  ])('the suite certificate (*, *.org, *.wildcard.org) for %s: %s', (host, ok) => {
    expect(checkServerIdentity(host, suite) === undefined).toBe(ok);
  });

  it('matches exact names and IP SANs, and says what the certificate is valid for otherwise', () => {
    const c = cert('DNS:www.example.com, IP Address:10.0.0.1');
    expect(checkServerIdentity('www.example.com.', c)).toBeUndefined();
    expect(checkServerIdentity('10.0.0.1', c)).toBeUndefined();
    expect(checkServerIdentity('10.0.0.2', c)?.message).toBe(
      'x509: certificate is valid for DNS:www.example.com, IP Address:10.0.0.1, not 10.0.0.2',
    );
  });
});
