// Unit tests of the substitution formatter (access log formats, header values) and header mutations using it.
import { describe, expect, it } from 'vitest';
import { FORMAT_COMMANDS, parseFormat } from '../../shared/envoy/substitution-format.ts';
import { StreamInfo } from '../stream-info.ts';
import { ConfigError } from './errors.ts';
import { compileFormat, compileJsonFormat, DEFAULT_ACCESS_LOG_FORMAT } from './formatter.ts';
import { applyMutations, compileHeaderMutation } from './headers.ts';

function info(): StreamInfo {
  const i = new StreamInfo({
    host: 'www.example.com',
    'user-agent': 'curl/8',
    'x-request-id': 'abc',
    'x-forwarded-for': '10.0.0.1',
  });
  i.method = 'GET';
  i.path = '/headers?x=1';
  i.responseCode = 200;
  i.bytesSent = 196;
  i.upstreamHost = '127.0.0.1:8080';
  i.upstreamCluster = 'kube_sampleapp_sampleapp_8000';
  i.responseHeaders = { 'x-envoy-upstream-service-time': '3' };
  i.endMono = i.startMono + 5;
  i.downstreamRemote = '127.0.0.1:5555';
  return i;
}

describe('access log formatter', () => {
  it('default format, Envoy-style', () => {
    const line = compileFormat(DEFAULT_ACCESS_LOG_FORMAT)(info());
    expect(line).toMatch(
      /^\[\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z\] "GET \/headers\?x=1 HTTP\/1\.1" 200 - 0 196 5 3 "10\.0\.0\.1" "curl\/8" "abc" "www\.example\.com" "127\.0\.0\.1:8080"\n$/,
    );
  });

  it('missing values print -, flags are joined, original path preferred', () => {
    const i = info();
    i.responseHeaders = {};
    i.upstreamHost = undefined;
    i.setFlag('UH');
    i.setFlag('NR');
    i.requestHeaders['x-envoy-original-path'] = '/before';
    const line = compileFormat(DEFAULT_ACCESS_LOG_FORMAT)(i);
    expect(line).toContain('"GET /before HTTP/1.1" 200 UH,NR');
    expect(line).toContain(' 5 - "10.0.0.1"');
    expect(line.trimEnd().endsWith('"-"')).toBe(true);
  });

  it('operators with arguments and truncation; unknown operators are config errors', () => {
    expect(compileFormat('%REQ(USER-AGENT):4% %UPSTREAM_CLUSTER% %%')(info())).toBe(
      'curl kube_sampleapp_sampleapp_8000 %',
    );
    expect(compileFormat('%DOWNSTREAM_REMOTE_ADDRESS_WITHOUT_PORT%')(info())).toBe('127.0.0.1');
    expect(compileFormat('%START_TIME(%Y)%')(info())).toMatch(/^\d{4}$/);
    expect(() => compileFormat('%NOPE%')).toThrow('Not supported field in StreamInfo: NOPE');
    expect(() => compileFormat('%REQ(')).toThrow(/Couldn't find valid command/);
  });

  it('evaluates every operator the shared parser accepts, and refuses what it refuses with its message', () => {
    for (const command of FORMAT_COMMANDS) {
      const format = ['REQ', 'RESP', 'TRAILER'].includes(command) ? `%${command}(x-a)%` : `%${command}%`;
      expect(typeof compileFormat(format)(info()), format).toBe('string');
    }
    for (const bad of ['%NOPE%', '%REQ%', 'a %REQ(', '%BYTES_SENT:x%']) {
      const parsed = (() => {
        try {
          parseFormat(bad);
        } catch (err) {
          return (err as Error).message;
        }
      })();
      expect(parsed, bad).toBeDefined();
      expect(() => compileFormat(bad), bad).toThrow(new ConfigError(parsed!));
      expect(() => compileJsonFormat({ a: bad }), bad).toThrow(new ConfigError(parsed!));
    }
  });

  it('JSON format keeps types and nulls', () => {
    const line = compileJsonFormat({
      code: '%RESPONSE_CODE%',
      host: '%UPSTREAM_HOST%',
      missing: '%RESP(x-none)%',
      n: 1,
    })(info());
    expect(JSON.parse(line)).toEqual({ code: '200', host: '127.0.0.1:8080', missing: null, n: 1 });
  });
});

describe('header mutations', () => {
  const opt = (key: string, value: string, extra: Record<string, unknown> = {}) => ({
    header: { key, value },
    ...extra,
  });

  it('append actions', () => {
    const h: Record<string, string | string[] | undefined> = { 'x-a': '1', 'x-b': '1', 'x-c': '1' };
    const m = compileHeaderMutation(
      [
        opt('x-a', '2'),
        opt('x-b', '2', { append_action: 'OVERWRITE_IF_EXISTS_OR_ADD' }),
        opt('x-c', '2', { append_action: 'ADD_IF_ABSENT' }),
        opt('x-d', '2', { append_action: 'ADD_IF_ABSENT' }),
        opt('x-e', '2', { append_action: 'OVERWRITE_IF_EXISTS' }),
        opt('x-f', '1', { append: false }),
        opt('x-g', '', {}),
        opt('x-h', '', { keep_empty_value: true }),
      ],
      ['x-remove'],
      'w',
    );
    h['x-remove'] = 'bye';
    applyMutations(h, [m], info());
    expect(h).toEqual({ 'x-a': ['1', '2'], 'x-b': '2', 'x-c': '1', 'x-d': '2', 'x-f': '1', 'x-h': '' });
  });

  it('formatter values', () => {
    const h: Record<string, string | string[] | undefined> = {};
    applyMutations(
      h,
      [compileHeaderMutation([opt('x-client', '%DOWNSTREAM_REMOTE_ADDRESS_WITHOUT_PORT%')], [], 'w')],
      info(),
    );
    expect(h['x-client']).toBe('127.0.0.1');
    expect(() => compileHeaderMutation([opt('x', '%BAD%')], [], 'w')).toThrow(/Not supported field/);
    expect(() => compileHeaderMutation([opt(':path', 'x')], [], 'w')).toThrow(/may not be modified/);
    expect(() =>
      compileHeaderMutation([opt('x', 'y', { append: true, append_action: 'ADD_IF_ABSENT' })], [], 'w'),
    ).toThrow(/Both append and append_action/);
  });
});
