// The server name check of upstream's Go TLS client (crypto/x509 Certificate.VerifyHostname), for every TLS
// round trip of the suite (HTTP/1.1 in roundtrip.ts, HTTP/2 in roundtrip-h2.ts, TCP over TLS in tcp.ts): Node's own
// check refuses the suite certificate's `*.org` for `example.org`, Go's takes it.
import net from 'node:net';
import type { PeerCertificate } from 'node:tls';

/**
 * The server name check of Go's crypto/x509 (Certificate.VerifyHostname, matchHostnames), which upstream's client
 * uses, instead of Node's: an IP against the IP SANs; a name against the DNS SANs, case-insensitive, `*` only as the
 * whole leftmost label and matching one label (Go takes `*.org` for `example.org`; Node refuses a wildcard over
 * fewer than three labels, and the suite's certificate has `*.org`).
 */
export function checkServerIdentity(host: string, cert: PeerCertificate): Error | undefined {
  const sans = (cert.subjectaltname ?? '').split(', ').filter(Boolean);
  const name = host.replace(/\.$/, '').toLowerCase();
  if (net.isIP(name)) {
    if (sans.some((s) => s === `IP Address:${name}`)) return undefined;
  } else {
    const hostParts = name.split('.');
    for (const san of sans) {
      if (!san.startsWith('DNS:')) continue;
      const parts = san.slice(4).replace(/\.$/, '').toLowerCase().split('.');
      if (parts.length !== hostParts.length) continue;
      if (parts.every((p, i) => p === hostParts[i] || (i === 0 && p === '*'))) return undefined;
    }
  }
  return Object.assign(new Error(`x509: certificate is valid for ${sans.join(', ')}, not ${host}`), {
    code: 'ERR_TLS_CERT_ALTNAME_INVALID',
  });
}
