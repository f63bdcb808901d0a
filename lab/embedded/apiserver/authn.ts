// Authentication: bearer tokens only. Three kinds:
// - the lab admin token (pki/admin-token): user `gwlab-admin`, group system:masters, bypasses RBAC;
// - privileged in-process identities (controllers), created at run time, also system:masters, never written to disk;
// - service-account tokens: JWTs in the shape of Kubernetes' bound tokens, signed with pki/sa.key (ES256 with the
//   ECDSA P-256 key of a new lab, RS256 with an older lab's RSA key, as kube-apiserver signs with its key). They are
//   accepted while they have not expired, their `aud` names one of the server's API audiences (kube-apiserver's
//   --api-audiences, default the issuer) and their service account (and bound pod, if any) still exists with the
//   same uid; RBAC applies to them. Lifetimes follow the TokenRequest API: 3600 s by default, 600 s to 2^32 s.
// JWT is a three-part base64url format over node:crypto's signatures; a library would add nothing but a dependency.
import { createHash, createPrivateKey, createPublicKey, randomBytes, sign, timingSafeEqual, verify } from 'node:crypto';
import { errors, fieldErrors } from './errors.ts';

export const ISSUER = 'https://kubernetes.default.svc.cluster.local';
/** TokenRequest's default expirationSeconds (pkg/apis/authentication/v1/defaults.go). */
export const DEFAULT_TOKEN_SECONDS = 3600;

export interface UserInfo {
  username: string;
  uid?: string;
  groups: string[];
  extra?: Record<string, string[]>;
}

export interface TokenOptions {
  /** Lifetime; default 3600 s, as TokenRequest's. */
  expirationSeconds?: number;
  /** Default: the server's API audiences. A token for other audiences is not accepted by this server. */
  audiences?: string[];
  /** Binds the token to a pod: it stops working when that pod (name and uid) is gone. */
  boundObject?: { kind: 'Pod' | 'Secret'; name: string; uid: string };
}

export interface IssuedToken {
  token: string;
  expirationTimestamp: string;
}

type Lookup = (namespace: string, name: string) => { uid: string } | undefined;

const b64 = (b: Buffer | string) => Buffer.from(b).toString('base64url');

export function isPrivileged(u: UserInfo): boolean {
  return u.groups.includes('system:masters');
}

export class Authenticator {
  private readonly key;
  private readonly pub;
  private readonly kid: string;
  /** The JWS algorithm of the signing key's type. */
  private readonly alg: 'ES256' | 'RS256';
  private readonly dsaEncoding: 'ieee-p1363' | undefined;
  private readonly adminToken: Buffer;
  private readonly privileged = new Map<string, UserInfo>();
  private readonly verified = new Map<string, { claims: Claims; user: UserInfo }>();
  private readonly lookupServiceAccount: Lookup;
  private readonly lookupPod: Lookup;
  private readonly apiAudiences: string[];

  constructor(opts: {
    saKeyPem: string;
    saPubPem: string;
    adminToken: string;
    lookupServiceAccount: Lookup;
    lookupPod: Lookup;
    /** kube-apiserver's --api-audiences; default [ISSUER]. */
    apiAudiences?: string[];
  }) {
    this.key = createPrivateKey(opts.saKeyPem);
    this.pub = createPublicKey(opts.saPubPem);
    // JWS wants ECDSA signatures as r || s (RFC 7518 3.4), not OpenSSL's DER.
    this.alg = this.key.asymmetricKeyType === 'ec' ? 'ES256' : 'RS256';
    this.dsaEncoding = this.alg === 'ES256' ? 'ieee-p1363' : undefined;
    this.kid = b64(
      createHash('sha256')
        .update(this.pub.export({ type: 'spki', format: 'der' }))
        .digest(),
    );
    this.adminToken = Buffer.from(opts.adminToken);
    this.lookupServiceAccount = opts.lookupServiceAccount;
    this.lookupPod = opts.lookupPod;
    this.apiAudiences = opts.apiAudiences?.length ? [...opts.apiAudiences] : [ISSUER];
  }

  /**
   * TokenRequest's defaulting and validation (pkg/apis/authentication/validation ValidateTokenRequest), in place:
   * expirationSeconds 3600 and the API audiences when unset; a lifetime under 10 minutes or over 2^32 s is 422.
   */
  defaultTokenRequestSpec(spec: { expirationSeconds?: unknown; audiences?: unknown }): void {
    const exp = spec.expirationSeconds ?? DEFAULT_TOKEN_SECONDS;
    if (typeof exp !== 'number' || !Number.isInteger(exp))
      throw errors.badRequest(
        `TokenRequest in version "v1" cannot be handled as a TokenRequest: json: cannot unmarshal ${typeof exp} into Go struct field TokenRequestSpec.spec.expirationSeconds of type int64`,
        [{ reason: 'FieldValueTypeInvalid', field: 'spec.expirationSeconds', message: 'expected int64' }],
      );
    const errs = [];
    if (exp < 600)
      errs.push(fieldErrors.invalid('spec.expirationSeconds', exp, 'may not specify a duration less than 10 minutes'));
    if (exp > 2 ** 32)
      errs.push(
        fieldErrors.invalid('spec.expirationSeconds', exp, 'may not specify a duration larger than 2^32 seconds'),
      );
    if (errs.length) throw errors.invalid('authentication.k8s.io', 'TokenRequest', '', errs);
    spec.expirationSeconds = exp;
    if (!Array.isArray(spec.audiences) || !spec.audiences.length) spec.audiences = [...this.apiAudiences];
  }

  /** A token for an in-process privileged identity (e.g. `system:controller:garbage-collector`). */
  issuePrivilegedToken(username: string): string {
    const token = `gwlab-internal.${randomBytes(24).toString('base64url')}`;
    this.privileged.set(token, { username, groups: ['system:masters', 'system:authenticated'] });
    return token;
  }

  issueServiceAccountToken(namespace: string, name: string, opts: TokenOptions = {}): IssuedToken {
    const now = Math.floor(Date.now() / 1000);
    const exp = now + (opts.expirationSeconds ?? DEFAULT_TOKEN_SECONDS);
    const sa = this.lookupServiceAccount(namespace, name);
    const k8s: Claims['kubernetes.io'] = { namespace, serviceaccount: { name, uid: sa?.uid ?? '' } };
    if (opts.boundObject?.kind === 'Pod') k8s.pod = { name: opts.boundObject.name, uid: opts.boundObject.uid };
    const claims: Claims = {
      aud: opts.audiences?.length ? opts.audiences : this.apiAudiences,
      exp,
      iat: now,
      nbf: now,
      iss: ISSUER,
      jti: randomBytes(16).toString('hex'),
      sub: `system:serviceaccount:${namespace}:${name}`,
      'kubernetes.io': k8s,
    };
    const head = b64(JSON.stringify({ alg: this.alg, kid: this.kid, typ: 'JWT' }));
    const body = b64(JSON.stringify(claims));
    const sig = b64(sign('sha256', Buffer.from(`${head}.${body}`), { key: this.key, dsaEncoding: this.dsaEncoding }));
    return { token: `${head}.${body}.${sig}`, expirationTimestamp: new Date(exp * 1000).toISOString() };
  }

  /** The user behind an `Authorization` header value, or undefined (→ 401). */
  authenticate(authorization: string | undefined): UserInfo | undefined {
    if (!authorization) return undefined;
    const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (!m) return undefined;
    const token = m[1];
    const tb = Buffer.from(token);
    if (tb.length === this.adminToken.length && timingSafeEqual(tb, this.adminToken)) {
      return { username: 'gwlab-admin', groups: ['system:masters', 'system:authenticated'] };
    }
    const p = this.privileged.get(token);
    if (p) return p;
    return this.authenticateJwt(token);
  }

  private authenticateJwt(token: string): UserInfo | undefined {
    let entry = this.verified.get(token);
    if (!entry) {
      const parts = token.split('.');
      if (parts.length !== 3) return undefined;
      let claims: Claims;
      try {
        const head = JSON.parse(Buffer.from(parts[0], 'base64url').toString());
        if (head.alg !== this.alg) return undefined;
        const signed = Buffer.from(`${parts[0]}.${parts[1]}`);
        const key = { key: this.pub, dsaEncoding: this.dsaEncoding };
        if (!verify('sha256', signed, key, Buffer.from(parts[2], 'base64url'))) return undefined;
        claims = JSON.parse(Buffer.from(parts[1], 'base64url').toString());
      } catch {
        return undefined;
      }
      const ns = claims['kubernetes.io']?.namespace;
      const sa = claims['kubernetes.io']?.serviceaccount?.name;
      if (claims.iss !== ISSUER || !ns || !sa || claims.sub !== `system:serviceaccount:${ns}:${sa}`) return undefined;
      // The token's audiences must meet the server's (pkg/serviceaccount/jwt.go); one without any is for the API.
      const aud = typeof claims.aud === 'string' ? [claims.aud] : Array.isArray(claims.aud) ? claims.aud : [];
      if (aud.length && !aud.some((a) => this.apiAudiences.includes(a))) return undefined;
      const user: UserInfo = {
        username: claims.sub,
        uid: claims['kubernetes.io'].serviceaccount.uid || undefined,
        groups: ['system:serviceaccounts', `system:serviceaccounts:${ns}`, 'system:authenticated'],
        extra: { 'authentication.kubernetes.io/credential-id': [`JTI=${claims.jti}`] },
      };
      const pod = claims['kubernetes.io'].pod;
      if (pod) {
        user.extra!['authentication.kubernetes.io/pod-name'] = [pod.name];
        user.extra!['authentication.kubernetes.io/pod-uid'] = [pod.uid];
      }
      entry = { claims, user };
      if (this.verified.size > 10_000) this.verified.clear();
      this.verified.set(token, entry);
    }
    const { claims, user } = entry;
    const now = Date.now() / 1000;
    if (claims.exp < now || claims.nbf > now + 60) return undefined;
    const k = claims['kubernetes.io'];
    const sa = this.lookupServiceAccount(k.namespace, k.serviceaccount.name);
    if (!sa || (k.serviceaccount.uid && sa.uid !== k.serviceaccount.uid)) return undefined;
    if (k.pod) {
      const pod = this.lookupPod(k.namespace, k.pod.name);
      if (!pod || pod.uid !== k.pod.uid) return undefined;
    }
    return user;
  }
}

interface Claims {
  aud: string[] | string;
  exp: number;
  iat: number;
  nbf: number;
  iss: string;
  jti: string;
  sub: string;
  'kubernetes.io': {
    namespace: string;
    serviceaccount: { name: string; uid: string };
    pod?: { name: string; uid: string };
  };
}
