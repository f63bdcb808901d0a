// The connection manager settings a ListenerPolicy sets, as Envoy honours them (http_connection_manager.proto and
// source/common/http/conn_manager_utility.cc): common_http_protocol_options.idle_timeout (a connection with no active
// request closes), use_remote_address + xff_num_trusted_hops (x-forwarded-for, x-envoy-external-address and
// %DOWNSTREAM_REMOTE_ADDRESS%), max_request_headers_kb (HTTP/1: 431 http1.headers_too_large), server_header_transformation,
// and the preserve_case header formatter (HTTP/1 header names as the client sent them).
import http from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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

type J = Record<string, any>;
const L = 'listener~8080';
const STDOUT_LOG = 'type.googleapis.com/envoy.extensions.access_loggers.stream.v3.StdoutAccessLog';
const PRESERVE_CASE = {
  header_key_format: {
    stateful_formatter: {
      name: 'preserve_case',
      typed_config: {
        '@type':
          'type.googleapis.com/envoy.extensions.http.header_formatters.preserve_case.v3.PreserveCaseFormatterConfig',
      },
    },
  },
};

let fx: XdsFixture;
let upstream: http.Server;
let upPort: number;
let port: number;
/** What the upstream saw last: its raw header lines. */
let lastRaw: string[] = [];

beforeAll(async () => {
  // An upstream that answers with its own Server header, after /slow waits 600 ms.
  upstream = http.createServer({ maxHeaderSize: 128 * 1024 }, (req, res) => {
    lastRaw = req.rawHeaders;
    const answer = () => {
      res.writeHead(200, { server: 'backend/1.0', 'content-type': 'application/json' });
      res.end(JSON.stringify(req.headers));
    };
    if (req.url?.startsWith('/slow')) setTimeout(answer, 600);
    else answer();
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  upPort = (upstream.address() as net.AddressInfo).port;
  fx = await startXdsFixture();
});

afterAll(async () => {
  await fx?.close();
  upstream?.closeAllConnections();
  if (upstream) await new Promise((r) => upstream.close(r));
});

async function apply(hcm: J) {
  const access_log = [
    {
      name: 'envoy.access_loggers.stdout',
      typed_config: {
        '@type': STDOUT_LOG,
        log_format: {
          text_format_source: {
            inline_string:
              '%RESPONSE_CODE% %RESPONSE_FLAGS% %RESPONSE_CODE_DETAILS% %DOWNSTREAM_REMOTE_ADDRESS% %DOWNSTREAM_DIRECT_REMOTE_ADDRESS%\n',
          },
        },
      },
    },
  ];
  const res = await fx.apply({
    clusters: [edsCluster('up')],
    endpoints: [cla('up', [['127.0.0.1', upPort]])],
    listeners: [listener(L, 0, { rds: L, hcm: { access_log, ...hcm } })],
    routes: [routeConfig(L, [vhost('www', ['*'], [route('/', 'up')])])],
  });
  expect(res.nacks.map((n) => n.error_detail?.message)).toEqual([]);
  port = fx.proxy.port(L);
}

const get = (path: string, headers: Record<string, string> = {}) =>
  httpRequest(`http://127.0.0.1:${port}${path}`, { host: 'www.example.com', headers, agent: false });
const completed = () => fx.proxy.server.stats.value('http.http.downstream_rq_completed') ?? 0;
/** The access log line of the next request, once the proxy completed it. */
async function logged<T>(f: () => Promise<T>): Promise<[T, string]> {
  const before = completed();
  const from = fx.proxy.access.length;
  const r = await f();
  await eventually(() => completed() > before);
  return [r, (fx.proxy.access[from] ?? '').trim()];
}

describe('idle_timeout (common_http_protocol_options)', () => {
  it('closes a keep-alive connection idle that long, never one with a request in flight', async () => {
    await apply({ common_http_protocol_options: { idle_timeout: '0.3s' } });
    // A raw keep-alive connection: a request slower than the idle timeout completes on it, then it goes idle.
    const c = net.connect(port, '127.0.0.1');
    try {
      let got = '';
      c.on('data', (d) => {
        got += d.toString();
      });
      const closed = new Promise<void>((r) => c.once('close', () => r()));
      c.write('GET /slow HTTP/1.1\r\nhost: www.example.com\r\n\r\n');
      await eventually(() => got.includes('"host":"www.example.com"'), 5000, 'the slow response');
      expect(got).toMatch(/^HTTP\/1\.1 200 /);
      // Then the proxy closes the idle connection.
      await closed;
    } finally {
      c.destroy();
    }
  });
});

describe('use_remote_address and xff_num_trusted_hops', () => {
  it('one trusted hop: the client is the last x-forwarded-for address; ours is appended', async () => {
    await apply({ use_remote_address: true, xff_num_trusted_hops: 1 });
    const [r, line] = await logged(() => get('/', { 'x-forwarded-for': '198.51.100.9, 203.0.113.7' }));
    const seen = JSON.parse(r.body);
    expect(seen['x-forwarded-for']).toBe('198.51.100.9, 203.0.113.7,127.0.0.1');
    expect(seen['x-envoy-external-address']).toBe('203.0.113.7');
    expect(line).toMatch(/^200 - via_upstream 203\.0\.113\.7:0 127\.0\.0\.1:\d+$/);
  });

  it('no trusted hop: the client is the connection peer, whatever x-forwarded-for says', async () => {
    await apply({ use_remote_address: true });
    const [r, line] = await logged(() => get('/', { 'x-forwarded-for': '203.0.113.7' }));
    expect(JSON.parse(r.body)['x-envoy-external-address']).toBe('127.0.0.1');
    expect(line).toMatch(/^200 - via_upstream 127\.0\.0\.1:\d+ 127\.0\.0\.1:\d+$/);
  });

  it('without use_remote_address: x-forwarded-for untouched, the client its last address', async () => {
    await apply({});
    const [r, line] = await logged(() => get('/', { 'x-forwarded-for': '203.0.113.7' }));
    expect(JSON.parse(r.body)['x-forwarded-for']).toBe('203.0.113.7');
    expect(line).toMatch(/^200 - via_upstream 203\.0\.113\.7:0 127\.0\.0\.1:\d+$/);
  });
});

describe('max_request_headers_kb (HTTP/1)', () => {
  it("over the limit: 431 as Envoy's HTTP/1 codec answers it (DPE, http1.headers_too_large)", async () => {
    await apply({ max_request_headers_kb: 2 });
    const [r, line] = await logged(() => get('/', { 'x-big': 'a'.repeat(3000) }));
    expect(r.status).toBe(431);
    expect(r.body).toBe('Request Header Fields Too Large');
    expect(line).toMatch(/^431 DPE http1\.headers_too_large /);
    expect((await get('/', { 'x-small': 'a'.repeat(500) })).status).toBe(200);
  });

  it("Envoy's default 60 KiB lets 30 KiB of headers through (more than node:http's own 16 KiB)", async () => {
    await apply({});
    expect((await get('/', { 'x-big': 'a'.repeat(30 * 1024) })).status).toBe(200);
    expect((await get('/', { 'x-big': 'a'.repeat(61 * 1024) })).status).toBe(431);
  });
});

describe('server_header_transformation', () => {
  it('OVERWRITE (default) sets envoy; APPEND_IF_ABSENT and PASS_THROUGH keep the upstream one', async () => {
    await apply({});
    expect((await get('/')).headers.server).toBe('envoy');
    await apply({ server_header_transformation: 'APPEND_IF_ABSENT' });
    expect((await get('/')).headers.server).toBe('backend/1.0');
    await apply({ server_header_transformation: 'PASS_THROUGH' });
    expect((await get('/')).headers.server).toBe('backend/1.0');
  });
});

describe('preserve_case header formatter', () => {
  it('HTTP/1 request header names reach the upstream as the client spelled them', async () => {
    await apply({ http_protocol_options: PRESERVE_CASE });
    await get('/', { 'X-Custom-Header': 'v' });
    expect(lastRaw).toContain('X-Custom-Header');
    await apply({});
    await get('/', { 'X-Custom-Header': 'v' });
    expect(lastRaw).toContain('x-custom-header');
    expect(lastRaw).not.toContain('X-Custom-Header');
  });

  it('another stateful formatter is NACKed', async () => {
    const res = await fx.apply({
      listeners: [
        listener(L, 0, {
          rds: L,
          hcm: {
            http_protocol_options: {
              header_key_format: {
                stateful_formatter: {
                  name: 'x',
                  typed_config: { '@type': 'type.googleapis.com/google.protobuf.Empty' },
                },
              },
            },
          },
        }),
      ],
    });
    expect(res.nacks.map((n) => n.error_detail?.message).join()).toContain(
      "Didn't find a registered implementation for 'x'",
    );
  });
});
