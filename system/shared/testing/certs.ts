// Certificates for TLS tests: RSA 2048 (Node's key generation, node-forge's X.509), self-signed or signed by a CA,
// valid now or expired. One helper for the proxy's TLS tests (system/proxy/test/tls*.test.ts), the control plane's
// listener tests and echo's L4 tests; in shared/ so that neither the control plane nor the proxy imports the other.
import { generateKeyPairSync } from 'node:crypto';
import forge from 'node-forge';

export interface Pem {
  cert: string;
  key: string;
}

export interface Issued extends Pem {
  /** For signing others with it (a CA). */
  forgeCert: forge.pki.Certificate;
  forgeKey: forge.pki.rsa.PrivateKey;
}

/**
 * A certificate whose CN (and DNS SAN) is `cn`: self-signed, or signed by `ca`; `ca: true` makes it a CA; `expired`
 * puts its validity in the past.
 */
export function selfSigned(cn: string, o: { issuer?: Issued; ca?: boolean; expired?: boolean } = {}): Issued {
  // Node's key generation (forge's is slow); 2048 bits, what OpenSSL's default security level takes. The PEM handed
  // out is Node's own: forge's re-encoding (privateKeyToPem) now and then writes an INTEGER OpenSSL refuses
  // ("asn1 encoding routines::illegal padding"; bench:proxy failed so), as conformance/utils/certificates.ts says.
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const pem = privateKey.export({ type: 'pkcs1', format: 'pem' }) as string;
  const priv = forge.pki.privateKeyFromPem(pem);
  const keys = { privateKey: priv, publicKey: forge.pki.rsa.setPublicKey(priv.n, priv.e) };
  const c = forge.pki.createCertificate();
  c.publicKey = keys.publicKey;
  c.serialNumber = '01';
  const day = 86_400_000;
  c.validity.notBefore = new Date(Date.now() - (o.expired ? 10 * day : 60_000));
  c.validity.notAfter = new Date(Date.now() + (o.expired ? -day : day));
  c.setSubject([{ name: 'commonName', value: cn }]);
  c.setIssuer(o.issuer ? o.issuer.forgeCert.subject.attributes : [{ name: 'commonName', value: cn }]);
  c.setExtensions(
    o.ca
      ? [
          { name: 'basicConstraints', cA: true, critical: true },
          { name: 'keyUsage', keyCertSign: true, digitalSignature: true, critical: true },
        ]
      : [{ name: 'subjectAltName', altNames: [{ type: 2, value: cn }] }],
  );
  c.sign(o.issuer?.forgeKey ?? keys.privateKey, forge.md.sha256.create());
  return {
    cert: forge.pki.certificateToPem(c),
    key: pem,
    forgeCert: c,
    forgeKey: keys.privateKey,
  };
}
