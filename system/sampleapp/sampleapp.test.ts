import http from 'node:http';
import { hostname } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalHeaderName } from './request.ts';
import { MAX_BODY_BYTES, MAX_BYTES, MAX_STREAM_LINES, type SampleApp, startSampleApp } from './server.ts';
import { chooseStatus, parseStatusSpec } from './status.ts';

interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  rawHeaders: string[];
  body: Buffer;
  text: string;
  json: () => any;
  localPort: number;
}

let app: SampleApp;
const accessLines: string[] = [];
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

function request(
  path: string,
  opts: { method?: string; headers?: http.OutgoingHttpHeaders; body?: string | Buffer; signal?: AbortSignal } = {},
): Promise<Reply> {
  // Node's client sends a DELETE body without framing unless told its length.
  const headers =
    opts.body === undefined ? opts.headers : { 'content-length': Buffer.byteLength(opts.body), ...opts.headers };
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${app.url}${path}`,
      { method: opts.method ?? 'GET', headers, agent, signal: opts.signal },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const body = Buffer.concat(chunks);
          resolve({
            status: res.statusCode!,
            headers: res.headers,
            rawHeaders: res.rawHeaders,
            body,
            text: body.toString('utf8'),
            json: () => JSON.parse(body.toString('utf8')),
            localPort: req.socket?.localPort ?? 0,
          });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(opts.body);
  });
}

beforeAll(async () => {
  app = await startSampleApp({ accessLog: (l) => accessLines.push(l), maxDelaySeconds: 0.3 });
});
afterAll(async () => {
  agent.destroy();
  await app.close();
});

describe('headers', () => {
  it('answers {headers: {Name: [values]}} with Go-canonical names, repeated headers kept apart and Host included', async () => {
    const r = await request('/headers', {
      headers: { 'x-lower-case': ['one', 'two'], 'USER-AGENT': 'curl/8.5.0', host: 'www.example.com' },
    });
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(Number(r.headers['content-length'])).toBe(r.body.length);
    const { headers } = r.json();
    expect(headers.Host).toEqual(['www.example.com']);
    expect(headers['User-Agent']).toEqual(['curl/8.5.0']);
    expect(headers['X-Lower-Case']).toEqual(['one', 'two']);
    for (const [name, values] of Object.entries(headers)) {
      expect(name).toBe(canonicalHeaderName(name));
      expect(Array.isArray(values)).toBe(true);
    }
    // Go marshals maps with sorted keys.
    expect(Object.keys(headers)).toEqual([...Object.keys(headers)].sort());
  });

  it('canonicalizes like Go textproto', () => {
    expect(canonicalHeaderName('x-request-ID')).toBe('X-Request-Id');
    expect(canonicalHeaderName('content-type')).toBe('Content-Type');
    expect(canonicalHeaderName('X-ENVOY-EXPECTED-RQ-TIMEOUT-MS')).toBe('X-Envoy-Expected-Rq-Timeout-Ms');
    expect(canonicalHeaderName('host')).toBe('Host');
    expect(canonicalHeaderName('bad name')).toBe('bad name');
  });

  it('keeps connections alive (two requests share one socket)', async () => {
    const a = await request('/headers');
    const b = await request('/headers');
    expect(a.headers.connection).toBe('keep-alive');
    expect(a.localPort).toBe(b.localPort);
  });
});

describe('CORS', () => {
  it('echoes the Origin, or * without one, with credentials allowed, on every response including errors', async () => {
    for (const path of ['/get', '/status/503', '/nope']) {
      const withOrigin = await request(path, { headers: { origin: 'https://app.example.com' } });
      expect(withOrigin.headers['access-control-allow-origin']).toBe('https://app.example.com');
      expect(withOrigin.headers['access-control-allow-credentials']).toBe('true');
      const without = await request(path);
      expect(without.headers['access-control-allow-origin']).toBe('*');
      expect(without.headers['access-control-allow-credentials']).toBe('true');
    }
  });

  it('answers an OPTIONS preflight with 200, methods, max age 3600 and the requested headers echoed', async () => {
    const r = await request('/anything/x', {
      method: 'OPTIONS',
      headers: {
        origin: 'https://app.example.com',
        'access-control-request-method': 'PUT',
        'access-control-request-headers': 'x-custom, content-type',
      },
    });
    expect(r.status).toBe(200);
    expect(r.body.length).toBe(0);
    expect(r.headers['access-control-allow-origin']).toBe('https://app.example.com');
    expect(r.headers['access-control-allow-methods']).toBe('GET, POST, HEAD, PUT, DELETE, PATCH, OPTIONS');
    expect(r.headers['access-control-max-age']).toBe('3600');
    expect(r.headers['access-control-allow-headers']).toBe('x-custom, content-type');
    const bare = await request('/get', { method: 'OPTIONS' });
    expect(bare.status).toBe(200);
    expect(bare.headers['access-control-allow-headers']).toBeUndefined();
  });
});

describe('get and anything', () => {
  it('GET /get reports args, headers, method, origin (X-Forwarded-For first) and url (X-Forwarded-Proto)', async () => {
    const r = await request('/get?a=1&a=2&b=x%20y', {
      headers: { host: 'www.example.com', 'x-forwarded-for': '10.1.2.3, 10.0.0.1', 'x-forwarded-proto': 'https' },
    });
    expect(r.status).toBe(200);
    expect(r.json()).toMatchObject({
      args: { a: ['1', '2'], b: ['x y'] },
      method: 'GET',
      origin: '10.1.2.3',
      url: 'https://www.example.com/get?a=1&a=2&b=x%20y',
    });
    expect(r.json().headers.Host).toEqual(['www.example.com']);
  });

  it('HEAD /get answers 200 without a body; POST /get is 405 with Allow', async () => {
    const head = await request('/get', { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.body.length).toBe(0);
    const post = await request('/get', { method: 'POST', body: 'x' });
    expect(post.status).toBe(405);
    expect(post.headers.allow).toBe('GET, HEAD, OPTIONS');
    expect(post.json()).toMatchObject({ status_code: 405, error: 'Method Not Allowed' });
  });

  it('/anything/... echoes any method with data, json and form', async () => {
    const json = await request('/anything/deep/path?q=1', {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: '{"a":[1,2]}',
    });
    expect(json.status).toBe(200);
    expect(json.json()).toMatchObject({
      method: 'PUT',
      args: { q: ['1'] },
      data: '{"a":[1,2]}',
      json: { a: [1, 2] },
      form: {},
      files: {},
    });
    expect(json.json().url).toMatch(/\/anything\/deep\/path\?q=1$/);

    const form = await request('/anything', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'k=v&k=w',
    });
    expect(form.json()).toMatchObject({ form: { k: ['v', 'w'] }, json: null });

    const binary = await request('/anything', {
      method: 'POST',
      headers: { 'content-type': 'application/octet-stream' },
      body: Buffer.from([0xff, 0xfe, 0x00]),
    });
    expect(binary.json().data).toBe('data:application/octet-stream;base64,//4A');
  });

  it('rejects a bad JSON body with 400 and a body over the limit with 413, keeping the connection usable', async () => {
    const bad = await request('/anything', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{nope',
    });
    expect(bad.status).toBe(400);
    expect(bad.json().detail).toMatch(/invalid JSON request body/);
    const big = await request('/anything', { method: 'POST', body: Buffer.alloc(MAX_BODY_BYTES + 1) });
    expect(big.status).toBe(413);
    expect((await request('/get')).status).toBe(200);
  });

  it('/post, /put, /patch, /delete take only their own method', async () => {
    for (const m of ['post', 'put', 'patch', 'delete']) {
      const ok = await request(`/${m}`, { method: m.toUpperCase(), body: 'x' });
      expect(ok.status, m).toBe(200);
      expect(ok.json().data).toBe('x');
      const wrong = await request(`/${m}`);
      expect(wrong.status).toBe(405);
      expect(wrong.headers.allow).toBe(`${m.toUpperCase()}, OPTIONS`);
    }
  });
});

describe('status', () => {
  it('answers the code given, with httpbin extras for redirects, 401 and 418', async () => {
    for (const code of [200, 204, 404, 500, 503]) {
      expect((await request(`/status/${code}`)).status).toBe(code);
    }
    const moved = await request('/status/302');
    expect(moved.status).toBe(302);
    expect(moved.headers.location).toBe('/redirect/1');
    expect((await request('/status/401')).headers['www-authenticate']).toBe('Basic realm="Fake Realm"');
    const teapot = await request('/status/418');
    expect(teapot.status).toBe(418);
    expect(teapot.text).toBe("I'm a teapot!");
    expect((await request('/status/503', { method: 'POST', body: 'x' })).status).toBe(503);
  });

  it('rejects invalid codes and weights with 400 naming the problem', async () => {
    for (const spec of ['abc', '99', '600', '200:x', '200:-1', '200:0', '200,', '1000']) {
      const r = await request(`/status/${spec}`);
      expect(r.status, spec).toBe(400);
      expect(r.json().status_code).toBe(400);
      expect(r.json().detail).toMatch(/status code|weight/);
    }
  });

  it('parses weighted lists and picks by weight', () => {
    expect(parseStatusSpec('200:3,500:1')).toEqual([
      { code: 200, weight: 3 },
      { code: 500, weight: 1 },
    ]);
    expect(parseStatusSpec('200:0.7,503:0.3')[1]).toEqual({ code: 503, weight: 0.3 });
    expect(parseStatusSpec('200,500')).toEqual([
      { code: 200, weight: 1 },
      { code: 500, weight: 1 },
    ]);
    const choices = parseStatusSpec('200:3,500:1');
    expect(chooseStatus(choices, 0)).toBe(200);
    expect(chooseStatus(choices, 0.74)).toBe(200);
    expect(chooseStatus(choices, 0.76)).toBe(500);
    expect(chooseStatus(choices, 0.999999)).toBe(500);
    expect(chooseStatus(parseStatusSpec('200:0,503:1'), 0)).toBe(503);
  });

  it('serves a weighted list in proportion over many requests', async () => {
    const counts: Record<number, number> = {};
    for (let i = 0; i < 200; i++) {
      const s = (await request('/status/200:3,500:1')).status;
      counts[s] = (counts[s] ?? 0) + 1;
    }
    expect(Object.keys(counts).sort()).toEqual(['200', '500']);
    // p = 0.75, n = 200: the standard deviation is 6 requests; this band is about 5 of them.
    expect(counts[200]).toBeGreaterThan(120);
    expect(counts[200]).toBeLessThan(180);
  });
});

describe('delay', () => {
  it('waits the given seconds, then answers like /get', async () => {
    const t0 = performance.now();
    const r = await request('/delay/0.1');
    expect(performance.now() - t0).toBeGreaterThanOrEqual(95);
    expect(r.status).toBe(200);
    expect(r.json()).toMatchObject({ method: 'GET', args: {} });
    expect((await request('/delay/50ms')).status).toBe(200);
  });

  it('caps the delay (at 10 s by default; this server is started with 0.3 s)', async () => {
    const t0 = performance.now();
    const r = await request('/delay/60');
    const took = performance.now() - t0;
    expect(r.status).toBe(200);
    expect(took).toBeGreaterThanOrEqual(290);
    expect(took).toBeLessThan(2000);
  });

  it('rejects a bad delay with 400', async () => {
    for (const bad of ['abc', '-1', '1h']) expect((await request(`/delay/${bad}`)).status).toBe(400);
  });

  it('logs a delayed request whose client gave up as aborted', async () => {
    const lines: string[] = [];
    const other = await startSampleApp({ accessLog: (l) => lines.push(l) });
    try {
      await new Promise<void>((resolve) => {
        const req = http.get(`${other.url}/delay/5`);
        req.on('error', () => resolve());
        setTimeout(() => req.destroy(), 50);
      });
      await waitFor(() => lines.length === 1);
      expect(JSON.parse(lines[0])).toMatchObject({ uri: '/delay/5', aborted: true });
    } finally {
      await other.close();
    }
  });
});

describe('response-headers', () => {
  it('sets the query as response headers and echoes them as JSON', async () => {
    const r = await request('/response-headers?X-Foo=a&X-Foo=b&x-bar=1');
    expect(r.status).toBe(200);
    expect(r.headers['x-foo']).toBe('a, b');
    expect(r.rawHeaders.filter((h) => h === 'X-Foo')).toHaveLength(2);
    expect(r.headers['x-bar']).toBe('1');
    expect(r.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(r.json()).toMatchObject({
      'X-Foo': ['a', 'b'],
      'X-Bar': ['1'],
      'Content-Type': ['application/json; charset=utf-8'],
      'Access-Control-Allow-Origin': ['*'],
    });
  });

  it('lets the query override Content-Type but refuses framing headers', async () => {
    const typed = await request('/response-headers?Content-Type=text/plain');
    expect(typed.headers['content-type']).toBe('text/plain');
    const framing = await request('/response-headers?Content-Length=5');
    expect(framing.status).toBe(400);
    expect(framing.json().detail).toMatch(/Content-Length cannot be set/);
  });
});

describe('small endpoints', () => {
  it('/ip, /uuid, /hostname', async () => {
    expect((await request('/ip')).json()).toEqual({ origin: '127.0.0.1' });
    expect((await request('/ip', { headers: { 'x-forwarded-for': '203.0.113.9' } })).json()).toEqual({
      origin: '203.0.113.9',
    });
    const a = (await request('/uuid')).json().uuid;
    const b = (await request('/uuid')).json().uuid;
    expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(a).not.toBe(b);
    expect((await request('/hostname')).json()).toEqual({ hostname: hostname() });
  });

  it('/bytes/{n} returns n random bytes, capped, repeatable with ?seed', async () => {
    const r = await request('/bytes/1000');
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('application/octet-stream');
    expect(r.body.length).toBe(1000);
    expect((await request('/bytes/10000000')).body.length).toBe(MAX_BYTES);
    const s1 = await request('/bytes/64?seed=42');
    const s2 = await request('/bytes/64?seed=42');
    const s3 = await request('/bytes/64?seed=43');
    expect(s1.body.equals(s2.body)).toBe(true);
    expect(s1.body.equals(s3.body)).toBe(false);
    expect((await request('/bytes/0')).body.length).toBe(0);
    expect((await request('/bytes/-1')).status).toBe(400);
    expect((await request('/bytes/1?seed=x')).status).toBe(400);
  });

  it('/stream/{n} writes n JSON lines with ids, capped', async () => {
    const r = await request('/stream/3?x=1');
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('application/json; charset=utf-8');
    const lines = r.text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => l.id)).toEqual([0, 1, 2]);
    expect(lines[0]).toMatchObject({ args: { x: ['1'] }, origin: '127.0.0.1' });
    expect(lines[0].headers.Host).toBeDefined();
    const capped = await request('/stream/1000');
    expect(capped.text.trim().split('\n')).toHaveLength(MAX_STREAM_LINES);
  });

  it('/redirect/{n} chains relative redirects to /get; ?absolute=true uses absolute URLs', async () => {
    const r = await request('/redirect/3');
    expect(r.status).toBe(302);
    expect(r.headers.location).toBe('/relative-redirect/2');
    expect((await request('/relative-redirect/2')).headers.location).toBe('/relative-redirect/1');
    expect((await request('/relative-redirect/1')).headers.location).toBe('/get');
    const abs = await request('/redirect/2?absolute=true', { headers: { host: 'www.example.com' } });
    expect(abs.headers.location).toBe('http://www.example.com/absolute-redirect/1');
    const last = await request('/absolute-redirect/1', { headers: { host: 'www.example.com' } });
    expect(last.headers.location).toBe('http://www.example.com/get');
    expect((await request('/redirect/0')).status).toBe(400);
    expect((await request('/redirect/x')).status).toBe(400);
  });

  it('unknown paths are a JSON 404; / lists the endpoints', async () => {
    const r = await request('/nope/x');
    expect(r.status).toBe(404);
    expect(r.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(r.json()).toMatchObject({ status_code: 404, error: 'Not Found' });
    expect((await request('/headers/extra')).status).toBe(404);
    const index = await request('/');
    expect(index.json().endpoints).toContain('GET /headers');
  });
});

describe('access log', () => {
  it('writes one JSON line per request', async () => {
    const before = accessLines.length;
    await request('/status/201?x=1', { headers: { 'user-agent': 'probe/1 "q" \\' } });
    await request('/headers');
    await waitFor(() => accessLines.length === before + 2);
    const [first, second] = accessLines.slice(before).map((l) => JSON.parse(l));
    expect(first).toMatchObject({
      level: 'info',
      component: 'sampleapp',
      msg: 'access',
      method: 'GET',
      uri: '/status/201?x=1',
      status: 201,
      bytes: 0,
      client_ip: '127.0.0.1',
      user_agent: 'probe/1 "q" \\',
    });
    expect(typeof first.duration_ms).toBe('number');
    expect(new Date(first.ts).toISOString()).toBe(first.ts);
    expect(second).toMatchObject({ uri: '/headers', status: 200 });
    expect(second.bytes).toBeGreaterThan(0);
    expect(second.aborted).toBeUndefined();
  });
});

async function waitFor(cond: () => boolean, timeoutMs = 5000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('--fail-status (a backend gone bad, for outlier detection scenarios)', () => {
  it('answers every request with the status, whatever the path; the command line refuses a non-status', async () => {
    const bad = await startSampleApp({ failStatus: 500 });
    try {
      for (const path of ['/get', '/status/200', '/headers']) {
        const r = await fetch(`${bad.url}${path}`);
        expect(r.status).toBe(500);
        expect(await r.text()).toBe('failing on purpose (--fail-status 500)\n');
      }
    } finally {
      await bad.close();
    }
    const { main } = await import('./main.ts');
    await expect(main(['--port', '0', '--fail-status', '42'])).rejects.toThrow(
      '--fail-status 42: an HTTP status code from 100 to 599',
    );
  });
});
