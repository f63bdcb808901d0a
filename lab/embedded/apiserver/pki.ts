// The lab's PKI: a CA, a serving certificate for the API server and the service-account signing key. Generated once
// per lab and kept in labPaths().pki, so a restarted lab keeps its trust: kubeconfigs and mounted `ca.crt` files stay
// valid. The serving certificate is re-issued (by the same CA) when the set of SANs changes. New keys are ECDSA P-256
// (kubeadm's `encryptionAlgorithm: ECDSA-P256`; kube-apiserver takes ECDSA serving and service-account keys): an RSA
// 2048 key cost 50-300 ms of CPU to generate, three of them ~0.2 s of every new lab's start (measured: a lab process
// with its PKI already made reached ready ~100 ms sooner), and every full TLS handshake signed with RSA. A lab made
// before keeps its RSA keys: certificates are signed with the algorithm of the signer's key, tokens likewise
// (authn.ts). The certificates are assembled as ASN.1 with node-forge's encoder (its certificate builder knows RSA
// keys only) and signed by node:crypto.
import { createHash, createPublicKey, generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { join } from 'node:path';
import forge from 'node-forge';

export interface Pki {
  caPem: string;
  certPem: string;
  keyPem: string;
  /** Private key (PKCS#8 PEM) that signs service-account tokens: ECDSA P-256 (ES256), or RSA (RS256) in older labs. */
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

interface KeyPair {
  privatePem: string;
  publicPem: string;
}

/** A new ECDSA P-256 key pair (~0.1 ms). */
function keyPair(): KeyPair {
  const { privateKey, publicKey } = generateKeyPairSync('ec', {
    namedCurve: 'P-256',
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
  return { privatePem: privateKey, publicPem: publicKey };
}

const { asn1 } = forge;
const U = asn1.Class.UNIVERSAL;
const seq = (items: forge.asn1.Asn1[]) => asn1.create(U, asn1.Type.SEQUENCE, true, items);
const oid = (dotted: string) => asn1.create(U, asn1.Type.OID, false, asn1.oidToDer(dotted).getBytes());
const fromDer = (der: Buffer) => asn1.fromDer(der.toString('binary'));

/** The signature AlgorithmIdentifier for a signer's key: ECDSA with SHA-256 (no parameters) or RSA PKCS#1 v1.5. */
function signatureAlgorithm(signerPem: string): forge.asn1.Asn1 {
  return createPublicKey(signerPem).asymmetricKeyType === 'ec'
    ? seq([oid('1.2.840.10045.4.3.2')])
    : seq([oid('1.2.840.113549.1.1.11'), asn1.create(U, asn1.Type.NULL, false, '')]);
}

interface CertSpec {
  subject: forge.pki.CertificateField[];
  /** The issuer's Name as it stands in its certificate; undefined: self-signed. */
  issuer?: forge.asn1.Asn1;
  years: number;
  publicPem: string;
  signerPem: string;
  extensions: object[];
}

/** An X.509 v3 certificate (RFC 5280 TBSCertificate, signed), as PEM. */
function certificate(c: CertSpec): string {
  const spki = fromDer(createPublicKey(c.publicPem).export({ type: 'spki', format: 'der' }));
  // subjectKeyIdentifier: SHA-1 of the subjectPublicKey bits (RFC 5280 4.2.1.2 (1)), past the unused-bits byte.
  const keyBits = (spki.value as forge.asn1.Asn1[])[1].value as string;
  const ski = createHash('sha1')
    .update(Buffer.from(keyBits.slice(1), 'binary'))
    .digest('hex');
  // forge fills in the names' and extensions' encodings (OIDs, value types) as its certificate builder does.
  const filled = forge.pki.createCertificate();
  filled.setSubject(c.subject);
  const skiValue = asn1.create(U, asn1.Type.OCTETSTRING, false, ski); // given: forge would hash an RSA key
  filled.setExtensions([...c.extensions, { name: 'subjectKeyIdentifier', value: skiValue }]);
  const subject = forge.pki.distinguishedNameToAsn1(filled.subject);
  const now = Date.now();
  const sigAlg = signatureAlgorithm(c.signerPem);
  const tbs = seq([
    asn1.create(asn1.Class.CONTEXT_SPECIFIC, 0, true, [
      asn1.create(U, asn1.Type.INTEGER, false, asn1.integerToDer(2).getBytes()),
    ]),
    asn1.create(U, asn1.Type.INTEGER, false, forge.util.hexToBytes(certificateSerial())),
    sigAlg,
    c.issuer ?? subject,
    seq([utcTime(new Date(now - 60_000)), utcTime(new Date(now + c.years * 365 * 24 * 3600_000))]),
    subject,
    spki,
    (forge.pki as unknown as ForgeExtensions).certificateExtensionsToAsn1(filled.extensions),
  ]);
  const tbsDer = Buffer.from(asn1.toDer(tbs).getBytes(), 'binary');
  const signature = sign('sha256', tbsDer, c.signerPem); // ECDSA: DER (r, s), as X.509 carries it
  const cert = seq([tbs, sigAlg, asn1.create(U, asn1.Type.BITSTRING, false, `\0${signature.toString('binary')}`)]);
  const der = Buffer.from(asn1.toDer(cert).getBytes(), 'binary');
  return `-----BEGIN CERTIFICATE-----\n${der
    .toString('base64')
    .match(/.{1,64}/g)!
    .join('\n')}\n-----END CERTIFICATE-----\n`;
}

/** What forge exports (node-forge lib/x509.js) that @types/node-forge does not declare. */
type ForgeExtensions = { certificateExtensionsToAsn1(exts: unknown[]): forge.asn1.Asn1 };

/** UTCTime until 2049, GeneralizedTime after (RFC 5280 4.1.2.5). */
function utcTime(d: Date): forge.asn1.Asn1 {
  return d.getUTCFullYear() < 2050
    ? asn1.create(U, asn1.Type.UTCTIME, false, asn1.dateToUtcTime(d))
    : asn1.create(U, asn1.Type.GENERALIZEDTIME, false, asn1.dateToGeneralizedTime(d));
}

/** The subject Name of a certificate (PEM), as encoded there: a serving certificate's issuer. */
function subjectOf(certPem: string): forge.asn1.Asn1 {
  const der = Buffer.from(certPem.replace(/-----[^-]+-----|\s/g, ''), 'base64');
  const tbs = (fromDer(der).value as forge.asn1.Asn1[])[0].value as forge.asn1.Asn1[];
  return tbs[tbs[0].tagClass === asn1.Class.CONTEXT_SPECIFIC ? 5 : 4];
}

/**
 * A random positive 128-bit certificate serial number in hex, in its minimal DER form: the first byte 0x01-0x7f, so
 * neither a leading zero nor a sign byte. (Clearing only the sign bit left a zero first byte once in 128 draws, a
 * non-minimal INTEGER when the next byte is below 0x80: OpenSSL refuses that certificate, "asn1 encoding
 * routines::illegal padding", and so does Go's x509, kubectl's.) The conformance tests' certificates use it too.
 */
export function certificateSerial(): string {
  const b = randomBytes(16);
  b[0] = 1 + (b[0]! % 0x7f);
  return b.toString('hex');
}

function makeCa(labName: string, { privatePem, publicPem }: KeyPair): { certPem: string; keyPem: string } {
  const certPem = certificate({
    subject: [{ name: 'commonName', value: `gwlab-${labName}-ca` }],
    years: 10,
    publicPem,
    signerPem: privatePem,
    extensions: [
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    ],
  });
  return { certPem, keyPem: privatePem };
}

function makeServing(caCertPem: string, caKeyPem: string, sans: string[], { privatePem, publicPem }: KeyPair) {
  const certPem = certificate({
    subject: [{ name: 'commonName', value: 'kube-apiserver' }],
    issuer: subjectOf(caCertPem),
    years: 5,
    publicPem,
    signerPem: caKeyPem,
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, critical: true },
      { name: 'extKeyUsage', serverAuth: true },
      { name: 'subjectAltName', altNames: sans.map((s) => (isIP(s) ? { type: 7, ip: s } : { type: 2, value: s })) },
    ],
  });
  return { certPem, keyPem: privatePem };
}

/** Loads the lab's PKI from `dir`, creating what is missing. `ipSans` are added to 127.0.0.1 and ::1. */
export function ensurePki(dir: string, labName: string, ipSans: string[] = []): Pki {
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
  const [caKeys, servingKeys, saKeys] = [needCa, needServing, needSa].map((n) => (n ? keyPair() : undefined));
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
