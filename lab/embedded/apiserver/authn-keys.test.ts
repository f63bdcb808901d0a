// Service-account tokens are signed with the algorithm of the lab's key (authn.ts): ES256 with a new lab's ECDSA
// P-256 key (the signature as JWS wants it, r || s: 64 bytes), RS256 with an older lab's RSA key; a token of the
// other algorithm, or one whose signature was altered, is refused.
import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Authenticator } from './authn.ts';

function authenticator(type: 'ec' | 'rsa'): Authenticator {
  const { privateKey, publicKey } =
    type === 'ec'
      ? generateKeyPairSync('ec', { namedCurve: 'P-256' })
      : generateKeyPairSync('rsa', { modulusLength: 2048 });
  return new Authenticator({
    saKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
    saPubPem: publicKey.export({ type: 'spki', format: 'pem' }) as string,
    adminToken: 'admin',
    lookupServiceAccount: () => ({ uid: 'sa-uid' }),
    lookupPod: () => undefined,
  });
}

const parts = (jwt: string) => jwt.split('.').map((p) => Buffer.from(p, 'base64url'));

describe('service-account token signatures', () => {
  for (const [type, alg, sigBytes] of [
    ['ec', 'ES256', 64],
    ['rsa', 'RS256', 256],
  ] as const) {
    it(`${type} key: ${alg} tokens that authenticate, altered ones that do not`, () => {
      const a = authenticator(type);
      const { token } = a.issueServiceAccountToken('team', 'bot');
      const [head, , sig] = parts(token);
      expect(JSON.parse(head.toString()).alg).toBe(alg);
      expect(sig.length).toBe(sigBytes);
      expect(a.authenticate(`Bearer ${token}`)?.username).toBe('system:serviceaccount:team:bot');
      const flipped = Buffer.from(sig);
      flipped[10] ^= 1;
      const [h, b] = token.split('.');
      expect(a.authenticate(`Bearer ${h}.${b}.${flipped.toString('base64url')}`)).toBeUndefined();
    });
  }

  it("refuses another lab's token, and one of the other algorithm", () => {
    const ec = authenticator('ec');
    expect(
      ec.authenticate(`Bearer ${authenticator('ec').issueServiceAccountToken('team', 'bot').token}`),
    ).toBeUndefined();
    expect(
      ec.authenticate(`Bearer ${authenticator('rsa').issueServiceAccountToken('team', 'bot').token}`),
    ).toBeUndefined();
  });
});
