// Access loggers as Envoy runs them (envoy.config.accesslog.v3.AccessLog, source/common/access_log/access_log_impl.cc,
// docs "Access logging" and "Access log filters"): a JSON file log, the command operators the issue lists, the
// status_code / response_flag / duration / header / health check / and / or filters, the response flags of the
// failures users look for (NR, UH, UF, UO, UT, URX, DC), and the NACK of a bad logger config with Envoy's message.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BufferedLogWriter } from '../http/access-log-buffer.ts';
import {
  cla,
  edsCluster,
  eventually,
  httpRequest,
  listener,
  route,
  routeConfig,
  startXdsFixture,
  vhost,
  type XdsFixture,
} from '../testing/harness.ts';
import { closedPort, startTestUpstream, type TestUpstream } from '../testing/upstream.ts';

type J = Record<string, any>;
const L = 'listener~8080';
const FILE_LOG = 'type.googleapis.com/envoy.extensions.access_loggers.file.v3.FileAccessLog';
const STDOUT_LOG = 'type.googleapis.com/envoy.extensions.access_loggers.stream.v3.StdoutAccessLog';

let fx: XdsFixture;
let up: TestUpstream;
let dir: string;
let port: number;
let dead: number;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gwlab-alog-'));
  up = await startTestUpstream('up');
  dead = await closedPort();
  fx = await startXdsFixture();
});

afterAll(async () => {
  await fx?.close();
  await up?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Pushes a listener with these access_log entries and routes: / → up, /none → a cluster without endpoints, /dead. */
async function apply(accessLog: J[], extra: { clusterExtra?: J } = {}) {
  const res = await fx.apply({
    clusters: [edsCluster('up', extra.clusterExtra), edsCluster('empty'), edsCluster('dead')],
    endpoints: [cla('up', [['127.0.0.1', up.port]]), cla('empty', []), cla('dead', [['127.0.0.1', dead]])],
    listeners: [listener(L, 0, { rds: L, hcm: { access_log: accessLog } })],
    routes: [
      routeConfig(L, [
        vhost(
          'www',
          ['www.example.com'],
          [
            route('/none', 'empty', { name: 'to-empty' }),
            route('/dead', 'dead'),
            route('/delay/', 'up', { route: { timeout: '0.2s' } }),
            route('/wait', 'up', { route: { prefix_rewrite: '/delay/5000' } }),
            route('/', 'up', { name: 'to-up' }),
          ],
        ),
      ]),
    ],
  });
  port = fx.proxy.port(L);
  return res.nacks.map((n) => n.error_detail?.message ?? '');
}

const get = (path: string, headers: Record<string, string> = {}) =>
  httpRequest(`http://127.0.0.1:${port}${path}`, { host: 'www.example.com', headers });
const readLines = (file: string) => {
  try {
    return readFileSync(file, 'utf8').split('\n').filter(Boolean);
  } catch {
    return [];
  }
};

describe('file access log with a JSON format', () => {
  it('writes one JSON object per request with the operators the issue lists', async () => {
    const file = join(dir, 'all.json');
    const json_format = {
      start: '%START_TIME%',
      method: '%REQ(:METHOD)%',
      path: '%REQ(X-ENVOY-ORIGINAL-PATH?:PATH)%',
      protocol: '%PROTOCOL%',
      code: '%RESPONSE_CODE%',
      flags: '%RESPONSE_FLAGS%',
      details: '%RESPONSE_CODE_DETAILS%',
      rx: '%BYTES_RECEIVED%',
      tx: '%BYTES_SENT%',
      duration: '%DURATION%',
      upstream_host: '%UPSTREAM_HOST%',
      cluster: '%UPSTREAM_CLUSTER%',
      route: '%ROUTE_NAME%',
      id: '%REQ(X-REQUEST-ID)%',
    };
    expect(
      await apply([
        {
          name: 'envoy.access_loggers.file',
          typed_config: { '@type': FILE_LOG, path: file, log_format: { json_format } },
        },
      ]),
    ).toEqual([]);
    expect((await get('/hello', { 'x-request-id': 'rid-1' })).status).toBe(200);
    expect((await get('/none')).status).toBe(503);
    const lines = await eventually(() => (readLines(file).length >= 2 ? readLines(file) : undefined));
    const [ok, uh] = lines.map((l) => JSON.parse(l));
    expect(ok).toMatchObject({
      method: 'GET',
      path: '/hello',
      protocol: 'HTTP/1.1',
      code: '200',
      flags: '-',
      details: 'via_upstream',
      rx: '0',
      upstream_host: `127.0.0.1:${up.port}`,
      cluster: 'up',
      route: 'to-up',
      id: 'rid-1',
    });
    expect(ok.start).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(Number(ok.tx)).toBeGreaterThan(0);
    expect(ok.duration).toMatch(/^\d+$/);
    expect(uh).toMatchObject({
      code: '503',
      flags: 'UH',
      details: 'no_healthy_upstream',
      route: 'to-empty',
      cluster: 'empty',
    });
    expect(uh.upstream_host).toBeNull();
  });

  it("the default format is Envoy's default text format", async () => {
    const file = join(dir, 'default.log');
    expect(await apply([{ name: 'f', typed_config: { '@type': FILE_LOG, path: file } }])).toEqual([]);
    await get('/nothing-here', { 'user-agent': 'curl/8.5.0', 'x-request-id': 'rid-2' });
    const [line] = await eventually(() => (readLines(file).length ? readLines(file) : undefined));
    expect(line).toMatch(
      /^\[\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z\] "GET \/nothing-here HTTP\/1\.1" 200 - 0 \d+ \d+ \d+ "-" "curl\/8\.5\.0" "rid-2" "www\.example\.com" "127\.0\.0\.1:\d+"$/,
    );
  });
});

describe('access log filters', () => {
  const stdout = (filter: J, format = '%RESPONSE_CODE% %RESPONSE_FLAGS% %REQ(:PATH)%\n') => [
    {
      name: 'envoy.access_loggers.stdout',
      filter,
      typed_config: { '@type': STDOUT_LOG, log_format: { text_format_source: { inline_string: format } } },
    },
  ];
  /** The lines logged for these requests, once the proxy has completed (and so logged or filtered out) all of them. */
  const completed = () => fx.proxy.server.stats.value('http.http.downstream_rq_completed') ?? 0;
  const logged = async (paths: string[], headers: Record<string, string>[] = []) => {
    const from = fx.proxy.access.length;
    const before = completed();
    for (const [n, p] of paths.entries()) await get(p, headers[n]);
    await eventually(() => completed() >= before + paths.length);
    return fx.proxy.access.slice(from).map((l) => l.trim());
  };
  const ge500 = {
    status_code_filter: { comparison: { op: 'GE', value: { default_value: 500, runtime_key: 'access_log.5xx' } } },
  };

  it('status_code_filter GE 500 keeps only the 5xx', async () => {
    expect(await apply(stdout(ge500))).toEqual([]);
    expect(await logged(['/a', '/status/404', '/none', '/status/502'])).toEqual(['503 UH /none', '502 - /status/502']);
  });

  it('status_code_filter EQ and LE compare as Envoy does', async () => {
    const eq = { status_code_filter: { comparison: { op: 'EQ', value: { default_value: 404, runtime_key: 'k' } } } };
    expect(await apply(stdout(eq))).toEqual([]);
    expect(await logged(['/a', '/status/404', '/none'])).toEqual(['404 - /status/404']);
    const le = { status_code_filter: { comparison: { op: 'LE', value: { default_value: 299, runtime_key: 'k' } } } };
    expect(await apply(stdout(le))).toEqual([]);
    expect(await logged(['/a', '/status/404'])).toEqual(['200 - /a']);
  });

  it('response_flag_filter keeps the listed flags; with no flags, any flagged request', async () => {
    expect(await apply(stdout({ response_flag_filter: { flags: ['UF', 'NR'] } }))).toEqual([]);
    expect(await logged(['/a', '/none', '/dead'])).toEqual(['503 UF /dead']);
    expect(await apply(stdout({ response_flag_filter: {} }))).toEqual([]);
    expect(await logged(['/a', '/none', '/status/500'])).toEqual(['503 UH /none']);
  });

  it('and_filter / or_filter / header_filter / duration_filter combine', async () => {
    const or = {
      or_filter: {
        filters: [
          { response_flag_filter: { flags: ['UH'] } },
          { header_filter: { header: { name: 'x-debug', present_match: true } } },
        ],
      },
    };
    expect(await apply(stdout(or))).toEqual([]);
    expect(await logged(['/a', '/b', '/none'], [{}, { 'x-debug': '1' }, {}])).toEqual(['200 - /b', '503 UH /none']);
    const and = {
      and_filter: {
        filters: [
          ge500,
          { duration_filter: { comparison: { op: 'GE', value: { default_value: 0, runtime_key: 'd' } } } },
        ],
      },
    };
    expect(await apply(stdout(and))).toEqual([]);
    expect(await logged(['/a', '/status/503'])).toEqual(['503 - /status/503']);
  });

  it('response flags where Envoy sets them: UT and DC (NR, UH, UF above; URX, UO, UC: data-path.test.ts; UAEX: filters.test.ts)', async () => {
    expect(await apply(stdout({ response_flag_filter: {} }))).toEqual([]);
    expect(await logged(['/delay/2000'])).toEqual(['504 UT /delay/2000']);
    // DC: the client goes away before the upstream answers; Envoy logs code 0 and downstream_remote_disconnect.
    expect(
      await apply(
        stdout(
          { response_flag_filter: { flags: ['DC'] } },
          '%RESPONSE_CODE% %RESPONSE_FLAGS% %RESPONSE_CODE_DETAILS%\n',
        ),
      ),
    ).toEqual([]);
    const from = fx.proxy.access.length;
    await new Promise<void>((resolve) => {
      const req = http.get({ host: '127.0.0.1', port, path: '/wait', headers: { host: 'www.example.com' } });
      req.on('error', () => resolve());
      setTimeout(() => {
        req.destroy();
        resolve();
      }, 200);
    });
    const lines = await eventually(() => (fx.proxy.access.length > from ? fx.proxy.access.slice(from) : undefined));
    expect(lines.map((l) => l.trim())).toEqual(['0 DC downstream_remote_disconnect']);
  });
});

describe('bad access log config is NACKed with Envoy message, the last good config kept', () => {
  it('an unknown command operator', async () => {
    const nacks = await apply([
      {
        name: 'x',
        typed_config: { '@type': STDOUT_LOG, log_format: { text_format_source: { inline_string: '%NOPE%\n' } } },
      },
    ]);
    expect(nacks.join()).toContain('Not supported field in StreamInfo: NOPE');
  });
  it('an unknown response flag, a comparison without runtime_key, an unsupported filter', async () => {
    const log = (filter: J) => [{ name: 'x', filter, typed_config: { '@type': STDOUT_LOG } }];
    expect((await apply(log({ response_flag_filter: { flags: ['XX'] } }))).join()).toContain(
      'ResponseFlagFilterValidationError.Flags[0]: value must be in list [LH UH UT LR UR UF UC UO NR',
    );
    expect(
      (await apply(log({ status_code_filter: { comparison: { op: 'GE', value: { default_value: 500 } } } }))).join(),
    ).toContain('RuntimeUInt32ValidationError.RuntimeKey: value length must be at least 1 characters');
    expect((await apply(log({ runtime_filter: { runtime_key: 'r' } }))).join()).toContain(
      'runtime_filter: this access log filter is not supported',
    );
    // Still serving with the last accepted listener.
    expect((await get('/a')).status).toBe(200);
  });
});

describe('BufferedLogWriter (writes off the request path)', () => {
  it('collects lines into one write, at the flush or at 64 KiB', () => {
    const writes: string[] = [];
    const w = new BufferedLogWriter((s) => writes.push(s), 60_000, 100);
    for (let i = 0; i < 5; i++) w.write(`line ${i}\n`);
    expect(writes).toEqual([]);
    w.flush();
    expect(writes).toEqual(['line 0\nline 1\nline 2\nline 3\nline 4\n']);
    w.write('x'.repeat(60));
    w.write('y'.repeat(60));
    expect(writes.length).toBe(2);
    w.flush();
    expect(writes.length).toBe(2);
  });
});
