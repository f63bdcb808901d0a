// The certificates the suite generates for its HTTPS cases, as upstream's conformance/utils/kubernetes/certificate.go
// (Gateway API v1.6.1): RSA 2048, valid a year, subject CN=default O=Acme Co, SANs from the hosts (IP, DNS name or
// URI), self-signed or signed by a CA that the suite stores in a ConfigMap (ca.crt and key.crt) and TLS Secrets
// (kubernetes.io/tls) with tls.crt and tls.key. node-forge builds them (the project's X.509 library).
import { generateKeyPairSync } from 'node:crypto';
import forge from 'node-forge';
import { certificateSerial } from '../../lab/embedded/apiserver/pki.ts';
import type { KObj, Kube } from '../../lab/toolkit/kube.ts';

export interface Ca {
  cert: forge.pki.Certificate;
  key: forge.pki.rsa.PrivateKey;
  /** The key as PEM (Node's encoding, see rsaKey). */
  keyPem: string;
}

function rsaKey(): { pub: forge.pki.rsa.PublicKey; priv: forge.pki.rsa.PrivateKey; pem: string } {
  // Node's key generation (forge's own is pure JavaScript and slow); forge reads the PEM to sign with it. The PEM
  // handed out is Node's own: forge's re-encoding of the key (privateKeyToPem) now and then wrote an INTEGER that
  // OpenSSL refuses ("asn1 encoding routines::illegal padding"), a flaky failure of whatever test drew that key.
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const pem = privateKey.export({ type: 'pkcs1', format: 'pem' }) as string;
  const priv = forge.pki.privateKeyFromPem(pem);
  return { priv, pub: forge.pki.rsa.setPublicKey(priv.n, priv.e), pem };
}

function sanOf(h: string): Record<string, unknown> {
  if (/^\d+\.\d+\.\d+\.\d+$/.test(h) || (h.includes(':') && !h.includes('/'))) return { type: 7, ip: h };
  if (/^[A-Za-z0-9*]([A-Za-z0-9.*-]*)$/.test(h) && h.length <= 253) return { type: 2, value: h };
  return { type: 6, value: h };
}

/** generateRSACert: a server (or client) certificate for `hosts`, self-signed unless a CA is given. PEMs. */
export function rsaCert(hosts: string[], usage: 'server' | 'client', ca?: Ca): { cert: string; key: string } {
  const { pub, priv, pem } = rsaKey();
  const c = forge.pki.createCertificate();
  c.publicKey = pub;
  c.serialNumber = certificateSerial();
  c.validity.notBefore = new Date();
  c.validity.notAfter = new Date(Date.now() + 365 * 24 * 3600_000);
  const subject = [
    { name: 'commonName', value: 'default' },
    { name: 'organizationName', value: 'Acme Co' },
  ];
  c.setSubject(subject);
  c.setIssuer(ca ? ca.cert.subject.attributes : subject);
  const ext: any[] = [
    { name: 'basicConstraints', cA: false, critical: true },
    { name: 'keyUsage', keyEncipherment: true, digitalSignature: true, critical: true },
    { name: 'extKeyUsage', ...(usage === 'server' ? { serverAuth: true } : { clientAuth: true }) },
  ];
  if (hosts.length) ext.push({ name: 'subjectAltName', altNames: hosts.map(sanOf) });
  c.setExtensions(ext);
  c.sign(ca?.key ?? priv, forge.md.sha256.create());
  return { cert: forge.pki.certificateToPem(c), key: pem };
}

/** generateCACert: the CA (O=Kubernetes Gateway API, CN=gatewayapi), valid a year. */
export function caCert(): Ca {
  const { pub, priv, pem } = rsaKey();
  const c = forge.pki.createCertificate();
  c.publicKey = pub;
  c.serialNumber = (2024).toString(16).padStart(4, '0');
  c.validity.notBefore = new Date();
  c.validity.notAfter = new Date(Date.now() + 365 * 24 * 3600_000);
  c.setSubject([
    { name: 'organizationName', value: 'Kubernetes Gateway API' },
    { name: 'countryName', value: 'US' },
    { name: 'commonName', value: 'gatewayapi' },
  ]);
  c.setIssuer(c.subject.attributes);
  c.setExtensions([
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', digitalSignature: true, keyCertSign: true, critical: true },
    { name: 'extKeyUsage', serverAuth: true, clientAuth: true },
  ]);
  c.sign(priv, forge.md.sha256.create());
  return { cert: c, key: priv, keyPem: pem };
}

const b64 = (s: string) => Buffer.from(s).toString('base64');

/** formatSecret: a kubernetes.io/tls Secret. */
export function tlsSecret(namespace: string, name: string, pem: { cert: string; key: string }): KObj {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { namespace, name },
    type: 'kubernetes.io/tls',
    data: { 'tls.crt': b64(pem.cert), 'tls.key': b64(pem.key) },
  };
}

/** MustCreateCACertConfigMap: the CA's certificate and (for the tests only) its key. */
export function caConfigMap(namespace: string, name: string, ca: Ca): KObj {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { namespace, name },
    data: { 'ca.crt': forge.pki.certificateToPem(ca.cert), 'key.crt': ca.keyPem },
  };
}

/** GetTLSSecret: a TLS Secret's certificate and key (PEM); an error when it has none. */
export async function getTLSSecret(
  kube: Kube,
  nn: { namespace: string; name: string },
): Promise<{ cert: string; key: string }> {
  const secret = await kube.get('v1', 'Secret', nn.name, nn.namespace);
  const cert = Buffer.from(secret?.data?.['tls.crt'] ?? '', 'base64').toString();
  const key = Buffer.from(secret?.data?.['tls.key'] ?? '', 'base64').toString();
  if (!cert || !key) throw new Error(`unexpected error finding TLS secret ${nn.namespace}/${nn.name}`);
  return { cert, key };
}
