// Request-target forms as Envoy's HTTP/1 codec reads them (ServerConnectionImpl::handlePath, Utility::Url::initialize;
// RFC 9112 §3.2): origin and asterisk form kept as :path, absolute form split into :authority, :path and :scheme,
// CONNECT's authority form, and the codec's 400/403 answers for what it refuses.
import { describe, expect, it } from 'vitest';
import { parseRequestTarget, type TargetOptions } from './request-target.ts';

const DEFAULT: TargetOptions = { allowAbsoluteUrl: true, validateScheme: false, tls: false };
const parse = (method: string, target: string, o: Partial<TargetOptions> = {}) =>
  parseRequestTarget(method, target, { ...DEFAULT, ...o });

describe('request-target forms', () => {
  it('origin-form and OPTIONS * stay the :path', () => {
    expect(parse('GET', '/a/b?c=d')).toEqual({ ok: true, path: '/a/b?c=d' });
    expect(parse('OPTIONS', '*')).toEqual({ ok: true, path: '*' });
  });

  it.each([
    ['http://www.example.com/a?b=c', { authority: 'www.example.com', path: '/a?b=c', scheme: 'http' }],
    ['HTTP://www.example.com:8080', { authority: 'www.example.com:8080', path: '/', scheme: 'http' }],
    ['https://www.example.com/x', { authority: 'www.example.com', path: '/x', scheme: 'https' }],
    ['http://user:pw@www.example.com/x', { authority: 'www.example.com', path: '/x', scheme: 'http' }],
    ['http://[::1]:8080/x', { authority: '[::1]:8080', path: '/x', scheme: 'http' }],
    ['http://127.0.0.1/x#frag', { authority: '127.0.0.1', path: '/x#frag', scheme: 'http' }],
    // The rest of the URI as written: the connection manager then refuses a :path without a leading '/'.
    ['http://www.example.com?q', { authority: 'www.example.com', path: '?q', scheme: 'http' }],
  ])('absolute-form %s', (target, want) => {
    expect(parse('GET', target)).toEqual({ ok: true, ...want });
  });

  it('absolute-form stays the :path when allow_absolute_url is false', () => {
    expect(parse('GET', 'http://www.example.com/a', { allowAbsoluteUrl: false })).toEqual({
      ok: true,
      path: 'http://www.example.com/a',
    });
  });

  it.each([
    ['ftp://www.example.com/a', 'http1.invalid_scheme'],
    ['www.example.com/a', 'http1.invalid_url'],
    ['http:/a', 'http1.invalid_url'],
    ['http:///a', 'http1.invalid_url'],
    ['http://host:65536/a', 'http1.invalid_url'],
    ['http://[not-v6]/a', 'http1.invalid_url'],
    ['http://a b/', 'http1.invalid_url'],
  ])('refuses %s with 400 %s', (target, details) => {
    expect(parse('GET', target)).toEqual({ ok: false, status: 400, details });
  });

  it('an asterisk is only OPTIONS’ target', () => {
    expect(parse('GET', '*')).toEqual({ ok: false, status: 400, details: 'http1.invalid_url' });
  });

  it('https in the clear: 403 where the scheme is validated (edge), accepted elsewhere', () => {
    expect(parse('GET', 'https://www.example.com/', { validateScheme: true })).toEqual({
      ok: false,
      status: 403,
      details: 'http1.https_url_on_plaintext_connection',
    });
    expect(parse('GET', 'https://www.example.com/', { validateScheme: true, tls: true })).toMatchObject({ ok: true });
    expect(parse('GET', 'http://www.example.com/', { validateScheme: true })).toMatchObject({ ok: true });
  });

  it('CONNECT takes host:port only', () => {
    expect(parse('CONNECT', 'www.example.com:443')).toEqual({
      ok: true,
      path: undefined,
      authority: 'www.example.com:443',
    });
    expect(parse('CONNECT', 'www.example.com')).toEqual({ ok: false, status: 400, details: 'http1.invalid_url' });
    expect(parse('CONNECT', 'http://www.example.com:443/')).toEqual({
      ok: false,
      status: 400,
      details: 'http1.invalid_url',
    });
  });
});
