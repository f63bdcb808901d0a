// The compressor's choice of encoding from Accept-Encoding, as Envoy's chooseEncoding with gzip the only compressor
// (common/compressor/compressor.cc): the highest q-value among gzip, identity and `*` wins, q=0 on gzip excludes it,
// a q-value that does not parse skips its token, and each outcome counts its header stat.
import { describe, expect, it } from 'vitest';
import { acceptsGzip } from './compressor.ts';

describe('acceptsGzip', () => {
  it('picks as Envoy does', () => {
    const cases: [string, boolean, string][] = [
      ['gzip', true, 'header_gzip'],
      ['br, gzip;q=0.8', true, 'header_gzip'],
      ['GZIP', true, 'header_gzip'],
      ['*', true, 'header_wildcard'],
      ['identity', false, 'header_identity'],
      ['identity;q=1, gzip;q=0.5', false, 'header_identity'],
      ['gzip;q=0.5, identity;q=0.5', true, 'header_gzip'],
      ['gzip;q=0, *', false, 'header_not_valid'],
      ['br, deflate', false, 'header_not_valid'],
      ['', false, 'header_not_valid'],
      ['gzip;q=abc', false, 'header_not_valid'],
      ['gzip;q=abc, *;q=0.1', true, 'header_wildcard'],
    ];
    for (const [header, ok, stat] of cases) expect(acceptsGzip(header), header).toEqual({ ok, stat });
  });
});
