// Envoy's substitution format parser (substitution-format.ts), the one the proxy's formatter and the control plane's
// format checks share: literals and `%%`, operators with an argument and a length, START_TIME arguments holding `%`,
// json_format walked at every depth, and Envoy's messages for an unknown operator, a header operator without its
// argument and a broken one (source/common/formatter/substitution_formatter.cc, stream_info_formatter.cc).
import { describe, expect, it } from 'vitest';
import { FormatError, parseFormat, parseJsonFormat } from './substitution-format.ts';

describe('substitution format parser', () => {
  it('literals, %%, operators with an argument and a maximum length', () => {
    expect(parseFormat('a %REQ(USER-AGENT?X-UA):4% %UPSTREAM_CLUSTER% %%\n')).toEqual([
      'a ',
      { command: 'REQ', arg: 'USER-AGENT?X-UA', maxLength: 4 },
      ' ',
      { command: 'UPSTREAM_CLUSTER' },
      ' %\n',
    ]);
    expect(parseFormat('%START_TIME(%Y-%m-%dT%H)%')).toEqual([{ command: 'START_TIME', arg: '%Y-%m-%dT%H' }]);
    expect(parseFormat('plain')).toEqual(['plain']);
    expect(parseFormat('')).toEqual([]);
  });

  it("refuses what Envoy refuses, in Envoy's words", () => {
    const message = (f: string) => {
      try {
        parseFormat(f);
      } catch (err) {
        expect(err).toBeInstanceOf(FormatError);
        return (err as Error).message;
      }
      return undefined;
    };
    expect(message('%NOPE%')).toBe('Not supported field in StreamInfo: NOPE');
    expect(message('x %REQ% y')).toBe('Invalid header configuration. Missing argument for REQ');
    expect(message('%RESP()%')).toBe('Invalid header configuration. Missing argument for RESP');
    expect(message('ab %REQ(')).toBe("Incorrect configuration: ab %REQ(. Couldn't find valid command at position 3");
    expect(message('%req%')).toBe("Incorrect configuration: %req%. Couldn't find valid command at position 0");
    expect(message('%BYTES_SENT:x%')).toMatch(/Couldn't find valid command at position 0/);
    // The first problem is the one reported, as the proxy compiling left to right would.
    expect(message('%NOPE% %REQ(')).toBe('Not supported field in StreamInfo: NOPE');
  });

  it('json_format: each string value a format, nested objects walked, other values kept', () => {
    expect(parseJsonFormat({ code: '%RESPONSE_CODE%', n: 1, inner: { host: 'h=%HOSTNAME%', list: ['%X%'] } })).toEqual({
      fields: [
        ['code', { format: [{ command: 'RESPONSE_CODE' }] }],
        ['n', { value: 1 }],
        [
          'inner',
          {
            fields: [
              ['host', { format: ['h=', { command: 'HOSTNAME' }] }],
              ['list', { value: ['%X%'] }],
            ],
          },
        ],
      ],
    });
    expect(() => parseJsonFormat({ a: { b: '%NOPE%' } })).toThrow(
      new FormatError('Not supported field in StreamInfo: NOPE'),
    );
  });
});
