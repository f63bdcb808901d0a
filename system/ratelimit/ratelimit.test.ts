// The rate-limit sample's rules and counters (server.ts Limiter), apart from gRPC: rule parsing, counting per
// distinct descriptor in fixed windows (as envoyproxy/ratelimit does), descriptors no rule matches.
import { describe, expect, it } from 'vitest';
import { Limiter, parseRule } from './server.ts';

describe('rate-limit sample', () => {
  it('parses rules and refuses a malformed one with the expected form', () => {
    expect(parseRule('gwlab:generic_key=api:3/minute')).toEqual({
      domain: 'gwlab',
      key: 'generic_key',
      value: 'api',
      requestsPerUnit: 3,
      unit: 'minute',
    });
    expect(parseRule('gwlab:user:5/second')).toMatchObject({ key: 'user', requestsPerUnit: 5, unit: 'second' });
    expect(() => parseRule('gwlab:user:5/week')).toThrow(
      /expected <domain>:<key>\[=<value>\]:<N>\/<second\|minute\|hour\|day>/,
    );
  });

  it('counts each distinct descriptor in fixed windows of the unit; over the limit once the count passes N', () => {
    let now = Date.parse('2026-01-01T00:00:10Z');
    const l = new Limiter([parseRule('d:user:2/minute')], () => now);
    const ann = [{ key: 'user', value: 'ann' }];
    expect(l.check('d', ann, 1).code).toBe('OK');
    expect(l.check('d', ann, 1)).toMatchObject({ code: 'OK', limit_remaining: 0 });
    expect(l.check('d', ann, 1).code).toBe('OVER_LIMIT');
    expect(l.check('d', [{ key: 'user', value: 'bob' }], 1).code).toBe('OK');
    expect(l.list()).toContainEqual(
      expect.objectContaining({
        descriptor: 'user=ann',
        hits: 3,
        limit: 2,
        overLimit: 1,
        windowStart: '2026-01-01T00:00:00.000Z',
      }),
    );
    now += 60_000;
    expect(l.check('d', ann, 1).code).toBe('OK');
  });

  it('a descriptor no rule matches (other domain, key or value) is OK and not counted', () => {
    const l = new Limiter([parseRule('d:generic_key=api:1/hour')]);
    expect(l.check('other', [{ key: 'generic_key', value: 'api' }], 5).code).toBe('OK');
    expect(l.check('d', [{ key: 'generic_key', value: 'web' }], 5).code).toBe('OK');
    expect(l.list()).toEqual([]);
  });
});
