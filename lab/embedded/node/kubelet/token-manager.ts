// The kubelet's service-account token manager (Kubernetes pkg/kubelet/token/token_manager.go), one per pod: projected
// serviceAccountToken sources get their token through it. A cached token is handed out until it needs a refresh:
// older than 80 % of its TTL (within 20 % of it, as the Go code computes it, of its expiry) or than 24 h, minus a
// random jitter, or issued "in the future" (the clock leapt back). A refresh that fails keeps the cached token while it
// is still valid and reports the error; with no valid token left it throws. The TTL is the one the API server
// answered in spec.expirationSeconds (kube-apiserver's --service-account-max-token-expiration may have shortened it).
//
// One deviation: the kubelet's jitter is up to 10 s, which with the lab's short-TTL option (a few seconds, below the
// 10 minutes Kubernetes allows) would refresh continuously; here it is at most 10 s and at most 10 % of the TTL.
export const MAX_TTL_MS = 24 * 3600_000;
export const MAX_JITTER_MS = 10_000;

/** What a TokenRequest answered: the token, its expiry and the TTL it was issued with. */
export interface IssuedToken {
  token: string;
  /** status.expirationTimestamp (RFC 3339). */
  expirationTimestamp: string;
  /** spec.expirationSeconds of the answer. */
  expirationSeconds: number;
}

/** What a projected serviceAccountToken source asks for. */
export interface TokenSpec {
  serviceAccount: string;
  audience?: string;
  expirationSeconds: number;
}

/** The kubelet's jitter, bounded by 10 % of the TTL (see the header). */
export function jitterMs(expirationSeconds: number, random: () => number = Math.random): number {
  return random() * Math.min(MAX_JITTER_MS, expirationSeconds * 100);
}

/** When (epoch ms) a token must be refreshed: token_manager.go requiresRefresh, for a given jitter. */
export function refreshAt(t: Omit<IssuedToken, 'token'>, jitter: number): number {
  const exp = Date.parse(t.expirationTimestamp);
  const iat = exp - t.expirationSeconds * 1000;
  const twentyPercentMs = Math.floor((t.expirationSeconds * 20) / 100) * 1000;
  return Math.min(iat + MAX_TTL_MS - jitter, exp - twentyPercentMs - jitter);
}

interface Entry {
  issued: IssuedToken;
  refreshAt: number;
}

export class TokenManager {
  private readonly cache = new Map<string, Entry>();
  private readonly fetch: (spec: TokenSpec) => Promise<IssuedToken>;
  private readonly now: () => number;
  private readonly random: () => number;
  /** Refresh failures that were covered by a still-valid cached token (the caller reports and retries them). */
  readonly failures: Error[] = [];

  constructor(
    fetch: (spec: TokenSpec) => Promise<IssuedToken>,
    opts: { now?: () => number; random?: () => number } = {},
  ) {
    this.fetch = fetch;
    this.now = opts.now ?? Date.now;
    this.random = opts.random ?? Math.random;
  }

  private static key(s: TokenSpec): string {
    return JSON.stringify([s.serviceAccount, s.audience ?? '', s.expirationSeconds]);
  }

  private requiresRefresh(e: Entry): boolean {
    const now = this.now();
    const iat = Date.parse(e.issued.expirationTimestamp) - e.issued.expirationSeconds * 1000;
    return now >= e.refreshAt || now < iat;
  }

  /** GetServiceAccountToken: the cached token, or a fresh one when it needs a refresh. */
  async get(spec: TokenSpec): Promise<string> {
    const key = TokenManager.key(spec);
    const cached = this.cache.get(key);
    if (cached && !this.requiresRefresh(cached)) return cached.issued.token;
    let issued: IssuedToken;
    try {
      issued = await this.fetch(spec);
    } catch (err) {
      if (!cached) throw err;
      if (this.now() >= Date.parse(cached.issued.expirationTimestamp)) {
        throw new Error(`token of service account "${spec.serviceAccount}" expired and refresh failed: ${err}`);
      }
      this.failures.push(err as Error);
      return cached.issued.token;
    }
    this.cache.set(key, { issued, refreshAt: refreshAt(issued, jitterMs(issued.expirationSeconds, this.random)) });
    return issued.token;
  }

  /** The earliest refresh time (epoch ms) of the cached tokens; undefined when there are none. */
  nextRefresh(): number | undefined {
    let next: number | undefined;
    for (const e of this.cache.values()) next = next === undefined ? e.refreshAt : Math.min(next, e.refreshAt);
    return next;
  }
}
