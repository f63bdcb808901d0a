// The lab's PKI: a CA, a serving certificate for the API server and the service-account signing key. Generated once
// per lab and kept in labPaths().pki, so a restarted lab keeps its trust: kubeconfigs and mounted `ca.crt` files stay
// valid. The serving certificate is re-issued (by the same CA) when the set of SANs changes. A new lab's three RSA
// keys are generated side by side on libuv's thread pool (0.1-0.3 s each, one after the other on the main thread they
// were ~0.6 s of every new lab's start; the caller does its own start-up work meanwhile). node-forge builds the
// certificates; OpenSSL (node:crypto) signs them: forge's own RSA in JavaScript took ~0.1-0.2 s per signature.
import { generateKeyPair, randomBytes, sign } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { join } from 'node:path';
import forge from 'node-forge';

export interface Pki {
  caPem: string;
  certPem: string;
  keyPem: string;
  /** RSA private key (PKCS#8 PEM) that signs service-account tokens. */
  saKeyPem: string;
  saPubPem: string;
  /** The lab admin's bearer token (bypasses RBAC). */
  adminToken: string;
}

const DNS_SANS = [
  'localhost',
  'kubernetes',
  'kubernetes.default',
  'kubernetes.default.svc',
  'kubernetes.default.svc.cluster.local',
];

interface RsaPair {
  privatePem: string;
  publicPem: string;
}

function rsaPair(): Promise<RsaPair> {
  return new Promise((resolve, reject) =>
    generateKeyPair(
      'rsa',
      {
        modulusLength: 2048,
        privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
        publicKeyEncoding: { type: 'spki', format: 'pem' },
      },
      (err, publicPem, privatePem) => (err ? reject(err) : resolve({ privatePem, publicPem })),
    ),
  );
}

/** What forge's cert.sign does (node-forge lib/x509.js) that @types/node-forge does not declare. */
type ForgeTbs = {
  getTBSCertificate(cert: forge.pki.Certificate): forge.asn1.Asn1;
};

/** forge's cert.sign(key, sha256) with the signature computed by node:crypto (RSASSA-PKCS1-v1_5, SHA-256). */
function signCert(cert: forge.pki.Certificate, privatePem: string): void {
  cert.signatureOid = forge.pki.oids.sha256WithRSAEncryption;
  cert.siginfo.algorithmOid = forge.pki.oids.sha256WithRSAEncryption;
  const tbs = (forge.pki as unknown as ForgeTbs).getTBSCertificate(cert);
  // certificateToPem reuses the TBSCertificate the signature was computed over, as after cert.sign.
  (cert as forge.pki.Certificate & { tbsCertificate: forge.asn1.Asn1 }).tbsCertificate = tbs;
  const der = Buffer.from(forge.asn1.toDer(tbs).getBytes(), 'binary');
  cert.signature = sign('sha256', der, privatePem).toString('binary');
}

function serial(): string {
  // Positive, 16 bytes.
  const b = randomBytes(16);
  b[0] &= 0x7f;
  return b.toString('hex');
}

function makeCa(labName: string, { privatePem, publicPem }: RsaPair): { certPem: string; keyPem: string } {
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(publicPem);
  cert.serialNumber = serial();
  cert.validity.notBefore = new Date(Date.now() - 60_000);
  cert.validity.notAfter = new Date(Date.now() + 10 * 365 * 24 * 3600_000);
  const attrs = [{ name: 'commonName', value: `gwlab-${labName}-ca` }];
  cert.setSubject(attrs);
  cert.setIssuer(attrs);
  cert.setExtensions([
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  signCert(cert, privatePem);
  return { certPem: forge.pki.certificateToPem(cert), keyPem: privatePem };
}

function makeServing(
  caCertPem: string,
  caKeyPem: string,
  sans: string[],
  { privatePem, publicPem }: RsaPair,
): { certPem: string; keyPem: string } {
  const ca = forge.pki.certificateFromPem(caCertPem);
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(publicPem);
  cert.serialNumber = serial();
  cert.validity.notBefore = new Date(Date.now() - 60_000);
  cert.validity.notAfter = new Date(Date.now() + 5 * 365 * 24 * 3600_000);
  cert.setSubject([{ name: 'commonName', value: 'kube-apiserver' }]);
  cert.setIssuer(ca.subject.attributes);
  cert.setExtensions([
    { name: 'basicConstraints', cA: false },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', serverAuth: true },
    {
      name: 'subjectAltName',
      altNames: sans.map((s) => (isIP(s) ? { type: 7, ip: s } : { type: 2, value: s })),
    },
  ]);
  signCert(cert, caKeyPem);
  return { certPem: forge.pki.certificateToPem(cert), keyPem: privatePem };
}

/** Loads the lab's PKI from `dir`, creating what is missing. `ipSans` are added to 127.0.0.1 and ::1. */
export async function ensurePki(dir: string, labName: string, ipSans: string[] = []): Promise<Pki> {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const p = (f: string) => join(dir, f);
  const write = (f: string, s: string) => writeFileSync(p(f), s, { mode: 0o600 });
  const sans = [...new Set(['127.0.0.1', '::1', ...ipSans, ...DNS_SANS])].sort();
  let current: string[] = [];
  try {
    current = JSON.parse(readFileSync(p('apiserver.sans.json'), 'utf8'));
  } catch {}
  const needCa = !existsSync(p('ca.crt')) || !existsSync(p('ca.key'));
  const needServing =
    needCa ||
    !existsSync(p('apiserver.crt')) ||
    !existsSync(p('apiserver.key')) ||
    current.join(',') !== sans.join(',');
  const needSa = !existsSync(p('sa.key')) || !existsSync(p('sa.pub'));
  // Every key that is missing, at once.
  const [caKeys, servingKeys, saKeys] = await Promise.all([needCa, needServing, needSa].map((n) => n && rsaPair()));
  if (caKeys) {
    const ca = makeCa(labName, caKeys);
    write('ca.key', ca.keyPem);
    write('ca.crt', ca.certPem);
  }
  const caPem = readFileSync(p('ca.crt'), 'utf8');
  const caKey = readFileSync(p('ca.key'), 'utf8');
  if (servingKeys) {
    const s = makeServing(caPem, caKey, sans, servingKeys);
    write('apiserver.key', s.keyPem);
    write('apiserver.crt', s.certPem);
    write('apiserver.sans.json', JSON.stringify(sans));
  }
  if (saKeys) {
    write('sa.key', saKeys.privatePem);
    write('sa.pub', saKeys.publicPem);
  }
  if (!existsSync(p('admin-token'))) write('admin-token', randomBytes(32).toString('base64url'));
  return {
    caPem,
    certPem: readFileSync(p('apiserver.crt'), 'utf8'),
    keyPem: readFileSync(p('apiserver.key'), 'utf8'),
    saKeyPem: readFileSync(p('sa.key'), 'utf8'),
    saPubPem: readFileSync(p('sa.pub'), 'utf8'),
    adminToken: readFileSync(p('admin-token'), 'utf8').trim(),
  };
}
