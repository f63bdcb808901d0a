// OpenAPI formats as kube-apiserver checks them in CRD schemas (apiextensions-apiserver's supported formats with
// kube-openapi strfmt's validators, which follow Go's net package: no leading zeros in IPv4, no zones, MACs of 6, 8
// or 20 octets), and the unknown ones it ignores.
import { describe, expect, it } from 'vitest';
import { checkFormat, parseCIDR, parseIP } from './formats.ts';

describe('checkFormat', () => {
  it.each([
    ['ipv4', '10.0.0.1', true],
    ['ipv4', '1.2.3', false],
    ['ipv4', '01.2.3.4', false],
    ['ipv4', '256.1.1.1', false],
    ['ipv4', '::1', false],
    ['ipv6', '2001:db8::1', true],
    ['ipv6', '::ffff:1.2.3.4', true],
    ['ipv6', '1200:0000:::AB00:1234:0000:2552:7777:1313', false],
    ['ipv6', '10.0.0.1', false],
    ['cidr', '10.0.0.0/8', true],
    ['cidr', '2001:db8::/32', true],
    ['cidr', '10.0.0.0/33', false],
    ['cidr', '10.0.0.0', false],
    ['mac', '00:1a:2b:3c:4d:5e', true],
    ['mac', '00-1a-2b-3c-4d-5e', true],
    ['mac', '001a.2b3c.4d5e', true],
    ['mac', '00:1a:2b', false],
    ['uuid', '123e4567-e89b-12d3-a456-426614174000', true],
    ['uuid', 'not-a-uuid', false],
    ['uuid4', '123e4567-e89b-42d3-a456-426614174000', true],
    ['uuid4', '123e4567-e89b-12d3-a456-426614174000', false],
    ['date-time', '2024-01-02T03:04:05Z', true],
    ['date-time', '2024-01-02T03:04:05.123+02:00', true],
    ['date-time', '2024-13-02T03:04:05Z', false],
    ['date-time', 'yesterday', false],
    ['date', '2024-02-29', true],
    ['date', '2023-02-29', false],
    ['byte', 'aGVsbG8=', true],
    ['byte', 'not base64!', false],
    ['hostname', 'example.com', true],
    ['hostname', '-bad.example.com', false],
    ['email', 'a@example.com', true],
    ['email', 'not-an-email', false],
    ['uri', 'https://example.com/x', true],
    ['uri', 'not a uri', false],
    ['duration', '1h30m', true],
    ['duration', '3 days', true],
    ['duration', '3 fortnights', false],
    ['int32', 'anything', true],
    ['my-own-format', 'anything', true],
  ])('%s %j → %s', (format, value, ok) => {
    expect(checkFormat(format, value)).toBe(ok);
  });

  it('parses addresses to bytes (IPv4 4 bytes, IPv6 16, an embedded dotted quad)', () => {
    expect(parseIP('10.1.2.3')).toEqual({ bytes: [10, 1, 2, 3], v4: true });
    expect(parseIP('::ffff:1.2.3.4')?.bytes).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 255, 255, 1, 2, 3, 4]);
    expect(parseCIDR('10.0.0.0/8')?.prefix).toBe(8);
  });
});
