// Test keys and tokens for the jwt_authn filter, made with node:crypto only (RS256: RSASSA-PKCS1-v1_5 with SHA-256,
// RFC 7518 §3.3): a key pair with its public JWKS, and compact JWS tokens with the claims a test asks for.
import { generateKeyPairSync, type KeyObject, sign } from 'node:crypto';

export interface TestSigner {
  /** `{"keys":[...]}` with the public key (kid, alg RS256). */
  jwks: string;
  token(claims: Record<string, unknown>, header?: Record<string, unknown>): string;
}

export function testSigner(kid = 'test-key'): TestSigner {
  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return {
    jwks: JSON.stringify({ keys: [{ ...publicKey.export({ format: 'jwk' }), kid, alg: 'RS256', use: 'sig' }] }),
    token: (claims, header = {}) => signJwt(privateKey, { alg: 'RS256', typ: 'JWT', kid, ...header }, claims),
  };
}

export function signJwt(key: KeyObject, header: Record<string, unknown>, claims: Record<string, unknown>): string {
  const enc = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const input = `${enc(header)}.${enc(claims)}`;
  return `${input}.${sign('sha256', Buffer.from(input), key).toString('base64url')}`;
}
