// The one JWKS rule (jwks.ts) the control plane's condition and the proxy's NACK share: JSON, a `keys` array, at least
// one key Node imports (a bad key among good ones is dropped, as jwt_verify_lib skips keys it cannot read).
import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { parseJwks } from './jwks.ts';

describe('parseJwks', () => {
  const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'jwk' });
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey.export({ format: 'jwk' });

  it('accepts EC, RSA and oct keys; drops a key it cannot import when another is good', () => {
    const doc = {
      keys: [
        { ...ec, kid: 'a' },
        { ...rsa, kid: 'b' },
        { kty: 'oct', k: 'c2VjcmV0' },
        { kty: 'EC', crv: 'P-256' },
      ],
    };
    const r = parseJwks(JSON.stringify(doc));
    expect('jwks' in r && r.jwks.keys.map((k) => k.kid ?? k.kty)).toEqual(['a', 'b', 'oct']);
  });

  it('names what is wrong: not JSON, no keys array, no usable key', () => {
    expect(parseJwks('{"keys": [')).toMatchObject({
      error: expect.stringMatching(/^Jwks is not in valid JSON format: /),
    });
    expect(parseJwks('{"key": []}')).toEqual({ error: 'Jwks has no [keys] array' });
    expect(parseJwks('{"keys": []}')).toEqual({ error: "Jwks doesn't have a valid key" });
    expect(parseJwks('{"keys": [{"kty": "RSA"}]}')).toMatchObject({
      error: expect.stringMatching(/^Jwks doesn't have a valid key \(keys\[0\]: /),
    });
  });
});
