// A JSON Web Key Set (RFC 7517) checked as Envoy's jwt_verify_lib reads one (Jwks::createFrom): valid JSON, a `keys`
// array, and at least one key Node can import (RSA, EC, OKP public keys; `oct` secrets). The control plane reports a
// bad inline JWKS as a TrafficPolicy condition (ir/policy-jwt.ts) and the proxy NACKs one (filters/jwt-authn.ts):
// one rule, here. Verification itself is the proxy's, with jose.
import { createPublicKey, createSecretKey } from 'node:crypto';

export interface JwksDoc {
  keys: Record<string, unknown>[];
}

/** The JWKS document, or why it is not one (the text a condition or a NACK shows). */
export function parseJwks(text: string): { jwks: JwksDoc } | { error: string } {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    return { error: `Jwks is not in valid JSON format: ${(err as Error).message}` };
  }
  const keys = (doc as { keys?: unknown })?.keys;
  if (!Array.isArray(keys)) return { error: 'Jwks has no [keys] array' };
  const problems: string[] = [];
  const good = keys.filter((k, i) => {
    try {
      const key = k as Record<string, unknown>;
      if (key.kty === 'oct') createSecretKey(Buffer.from(String(key.k ?? ''), 'base64url'));
      else createPublicKey({ key: key as import('node:crypto').JsonWebKey, format: 'jwk' });
      return true;
    } catch (err) {
      problems.push(`keys[${i}]: ${(err as Error).message}`);
      return false;
    }
  });
  if (!good.length)
    return { error: `Jwks doesn't have a valid key${problems.length ? ` (${problems.join('; ')})` : ''}` };
  return { jwks: { keys: good as Record<string, unknown>[] } };
}
