// The kubelet's token renewal schedule (token-manager.ts), against Kubernetes pkg/kubelet/token/token_manager.go and
// its token_manager_test.go cases: refresh after 80 % of the TTL (20 % computed in whole seconds) or 24 h, minus a
// jitter of at most 10 s (here also at most 10 % of the TTL), or when the token was issued in the future; a failed
// refresh keeps a still-valid token and reports the failure, and fails once the token has expired.
import { describe, expect, it } from 'vitest';
import { type IssuedToken, jitterMs, MAX_JITTER_MS, MAX_TTL_MS, refreshAt, TokenManager } from './token-manager.ts';

const T0 = Date.parse('2025-01-01T00:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString();
const issued = (iat: number, ttlSeconds: number, token = 't'): IssuedToken => ({
  token,
  expirationTimestamp: iso(iat + ttlSeconds * 1000),
  expirationSeconds: ttlSeconds,
});

describe('refresh schedule', () => {
  it('is 80 % of the TTL for the kubelet default of 3607 s (721 s before expiry), minus the jitter', () => {
    const t = issued(T0, 3607);
    expect(refreshAt(t, 0)).toBe(T0 + (3607 - 721) * 1000);
    expect(refreshAt(t, 4000)).toBe(T0 + (3607 - 721) * 1000 - 4000);
  });

  it('is 24 h after issue for long-lived tokens', () => {
    expect(refreshAt(issued(T0, 365 * 24 * 3600), 0)).toBe(T0 + MAX_TTL_MS);
    expect(refreshAt(issued(T0, 48 * 3600), 2000)).toBe(T0 + MAX_TTL_MS - 2000);
  });

  it('takes 20 % in whole seconds, as Go integer division does', () => {
    expect(refreshAt(issued(T0, 10), 0)).toBe(T0 + 8000);
    expect(refreshAt(issued(T0, 7), 0)).toBe(T0 + 6000); // 7*20/100 = 1
  });

  it('jitters by at most 10 s, and by at most 10 % of short TTLs', () => {
    expect(jitterMs(3607, () => 0.999999)).toBeCloseTo(MAX_JITTER_MS, -1);
    expect(jitterMs(3607, () => 0)).toBe(0);
    expect(jitterMs(10, () => 0.999999)).toBeLessThanOrEqual(1000);
  });
});

describe('TokenManager', () => {
  function manager(answers: (IssuedToken | Error)[]) {
    let now = T0;
    const asked: number[] = [];
    const m = new TokenManager(
      async () => {
        asked.push(now);
        const a = answers.shift();
        if (!a || a instanceof Error) throw a ?? new Error('no answer');
        return a;
      },
      { now: () => now, random: () => 0 },
    );
    return { m, asked, at: (ms: number) => (now = ms) };
  }
  const spec = { serviceAccount: 'default', expirationSeconds: 3607 };

  it('hands out the cached token until it is due, then a fresh one', async () => {
    const { m, asked, at } = manager([issued(T0, 3607, 'a'), issued(T0 + 2886_000, 3607, 'b')]);
    expect(await m.get(spec)).toBe('a');
    expect(m.nextRefresh()).toBe(T0 + 2886_000);
    at(T0 + 2885_999);
    expect(await m.get(spec)).toBe('a');
    at(T0 + 2886_000);
    expect(await m.get(spec)).toBe('b');
    expect(asked).toEqual([T0, T0 + 2886_000]);
    expect(m.nextRefresh()).toBe(T0 + 2 * 2886_000);
  });

  it('keys the cache by service account, audience and TTL', async () => {
    const { m, asked } = manager([issued(T0, 3607, 'a'), issued(T0, 3607, 'b'), issued(T0, 600, 'c')]);
    expect(await m.get(spec)).toBe('a');
    expect(await m.get({ ...spec, audience: 'vault' })).toBe('b');
    expect(await m.get({ ...spec, expirationSeconds: 600 })).toBe('c');
    expect(await m.get({ ...spec, audience: 'vault' })).toBe('b');
    expect(asked.length).toBe(3);
  });

  it('uses the TTL the API server answered (a capped one) for the schedule', async () => {
    const { m } = manager([issued(T0, 10, 'short')]);
    await m.get(spec); // asked for 3607 s, the server capped it to 10 s
    expect(m.nextRefresh()).toBe(T0 + 8000);
  });

  it('keeps a still-valid token when a refresh fails, reporting the failure; fails once it has expired', async () => {
    const { m, at } = manager([issued(T0, 3607, 'a'), new Error('connection refused'), new Error('still down')]);
    await m.get(spec);
    at(T0 + 3000_000);
    expect(await m.get(spec)).toBe('a');
    expect(m.failures.map((e) => e.message)).toEqual(['connection refused']);
    at(T0 + 3607_000);
    await expect(m.get(spec)).rejects.toThrow(/expired and refresh failed: Error: still down/);
  });

  it('refreshes a token issued in the future (the clock leapt back)', async () => {
    const { m, at } = manager([issued(T0, 3607, 'a'), issued(T0 - 60_000, 3607, 'b')]);
    await m.get(spec);
    at(T0 - 60_000);
    expect(await m.get(spec)).toBe('b');
  });
});
