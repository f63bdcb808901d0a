// The lab's PKI: a CA, a serving certificate for the API server and the service-account signing key. Generated once
// per lab and kept in labPaths().pki, so a restarted lab keeps its trust: kubeconfigs and mounted `ca.crt` files stay
// valid. The serving certificate is re-issued (by the same CA) when the set of SANs changes.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
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

function rsaPair(): { privatePem: string; publicPem: string } {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return {
    privatePem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    publicPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  };
}

function serial(): string {
  // Positive, 16 bytes.
  const b = randomBytes(16);
  b[0] &= 0x7f;
  return b.toString('hex');
}

function makeCa(labName: string): { certPem: string; keyPem: string } {
  const { privatePem, publicPem } = rsaPair();
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
  cert.sign(forge.pki.privateKeyFromPem(privatePem), forge.md.sha256.create());
  return { certPem: forge.pki.certificateToPem(cert), keyPem: privatePem };
}

function makeServing(caCertPem: string, caKeyPem: string, sans: string[]): { certPem: string; keyPem: string } {
  const { privatePem, publicPem } = rsaPair();
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
  cert.sign(forge.pki.privateKeyFromPem(caKeyPem), forge.md.sha256.create());
  return { certPem: forge.pki.certificateToPem(cert), keyPem: privatePem };
}

/** Loads the lab's PKI from `dir`, creating what is missing. `ipSans` are added to 127.0.0.1 and ::1. */
export function ensurePki(dir: string, labName: string, ipSans: string[] = []): Pki {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const p = (f: string) => join(dir, f);
  const write = (f: string, s: string) => writeFileSync(p(f), s, { mode: 0o600 });
  if (!existsSync(p('ca.crt')) || !existsSync(p('ca.key'))) {
    const ca = makeCa(labName);
    write('ca.key', ca.keyPem);
    write('ca.crt', ca.certPem);
  }
  const caPem = readFileSync(p('ca.crt'), 'utf8');
  const caKey = readFileSync(p('ca.key'), 'utf8');
  const sans = [...new Set(['127.0.0.1', '::1', ...ipSans, ...DNS_SANS])].sort();
  let current: string[] = [];
  try {
    current = JSON.parse(readFileSync(p('apiserver.sans.json'), 'utf8'));
  } catch {}
  if (!existsSync(p('apiserver.crt')) || !existsSync(p('apiserver.key')) || current.join(',') !== sans.join(',')) {
    const s = makeServing(caPem, caKey, sans);
    write('apiserver.key', s.keyPem);
    write('apiserver.crt', s.certPem);
    write('apiserver.sans.json', JSON.stringify(sans));
  }
  if (!existsSync(p('sa.key')) || !existsSync(p('sa.pub'))) {
    const k = rsaPair();
    write('sa.key', k.privatePem);
    write('sa.pub', k.publicPem);
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
