// Connection-level behaviour (connection.ts): a keep-alive TLS connection carrying kubectl's pattern (a large request
// right after a large response) never loses a request to Node's paused parser, and bytes that are not HTTP/1.1 get a
// Status body. The client runs in a worker thread: like kubectl, it must not share the server's event loop, or the
// server would always have drained its response before the next request is read.
import { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, closeApiAgents } from './testing/requests.ts';
import { startTestLab, type TestLab } from './testing/test-lab.ts';

let lab: TestLab;

/**
 * The worker: one TLS connection, `n` requests in turn, each written as soon as the previous response is complete
 * (Content-Length framing); reports every status and whether the server closed the connection.
 */
const CLIENT = `
const { workerData, parentPort } = require('node:worker_threads');
const tls = require('node:tls');
const { url, ca, token, n, sizes } = workerData;
const u = new URL(url);
const socket = tls.connect({ host: u.hostname, port: Number(u.port), ca, servername: 'localhost' });
let buf = Buffer.alloc(0);
const statuses = [];
let done = false;
const finish = (extra) => { if (!done) { done = true; socket.destroy(); parentPort.postMessage({ statuses, ...extra }); } };
const send = () => {
  const i = statuses.length;
  const body = JSON.stringify({ data: { big: String(i % 10).repeat(sizes[i % sizes.length]) } });
  socket.write('PATCH /api/v1/namespaces/default/configmaps/big HTTP/1.1\\r\\nHost: apiserver\\r\\n' +
    'Authorization: Bearer ' + token + '\\r\\nContent-Type: application/merge-patch+json\\r\\n' +
    'User-Agent: keepalive-test\\r\\nContent-Length: ' + Buffer.byteLength(body) + '\\r\\n\\r\\n' + body);
};
socket.on('secureConnect', send);
socket.on('data', (d) => {
  buf = Buffer.concat([buf, d]);
  for (;;) {
    const end = buf.indexOf('\\r\\n\\r\\n');
    if (end < 0) return;
    const head = buf.subarray(0, end).toString();
    const m = /content-length: *(\\d+)/i.exec(head);
    const len = m ? Number(m[1]) : 0;
    if (buf.length < end + 4 + len) return;
    statuses.push(Number(head.split(' ')[1]));
    buf = buf.subarray(end + 4 + len);
    if (/connection: *close/i.test(head)) return finish({ closedBy: 'server', lastHead: head, lastBody: '' });
    if (statuses.length >= n) return finish({});
    send();
  }
});
socket.on('error', (e) => finish({ error: String(e) }));
socket.on('close', () => finish({ closedBy: 'server' }));
`;

function runClient(n: number, sizes: number[]): Promise<{ statuses: number[]; closedBy?: string; error?: string }> {
  const worker = new Worker(CLIENT, {
    eval: true,
    workerData: { url: lab.server.url, ca: lab.server.caPem, token: lab.server.adminToken, n, sizes },
  });
  return new Promise((resolve, reject) => {
    worker.once('message', (m) => {
      resolve(m);
      void worker.terminate();
    });
    worker.once('error', reject);
  });
}

/** Raw bytes over TLS; resolves with everything the server sent before closing. */
async function rawExchange(payload: string): Promise<string> {
  const tls = await import('node:tls');
  const u = new URL(lab.server.url);
  return new Promise((resolve, reject) => {
    const s = tls.connect({ host: u.hostname, port: Number(u.port), ca: lab.server.caPem, servername: 'localhost' });
    let out = '';
    s.on('secureConnect', () => s.write(payload));
    s.on('data', (d) => {
      out += d.toString();
    });
    s.on('end', () => s.end());
    s.on('close', () => resolve(out));
    s.on('error', reject);
    s.setTimeout(10_000, () => {
      s.destroy();
      reject(new Error(`no answer within 10 s; got ${JSON.stringify(out)}`));
    });
  });
}

const statusOf = (response: string) => {
  const [head, body] = response.split('\r\n\r\n');
  return { head, status: JSON.parse(body) };
};

beforeAll(async () => {
  lab = await startTestLab({ labName: 'connection' });
  await api(lab, 'POST', '/api/v1/namespaces/default/configmaps', {
    body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'big' }, data: { big: 'x' } },
  });
});
afterAll(async () => {
  await closeApiAgents();
  await lab?.stop();
});

describe('keep-alive', () => {
  it('100 large PATCHes, each sent right after the large response to the previous one, on one TLS connection: all 200', async () => {
    const r = await runClient(100, [100_000, 300_000, 200_000]);
    expect(r.error).toBeUndefined();
    expect(r.closedBy).toBeUndefined();
    expect(r.statuses).toEqual(Array(100).fill(200));
  });
});

describe('requests that do not parse', () => {
  it('get a Status body naming the parse error, then the connection closes; the server keeps serving', async () => {
    const bad = statusOf(await rawExchange('NOT-HTTP / HTTP/1.1\r\nHost: x\r\n\r\n'));
    expect(bad.head).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(bad.head).toContain('Content-Type: application/json');
    expect(bad.head).toContain('Connection: close');
    expect(bad.status).toMatchObject({
      kind: 'Status',
      apiVersion: 'v1',
      status: 'Failure',
      reason: 'BadRequest',
      code: 400,
    });
    expect(bad.status.message).toMatch(/^the request could not be parsed as HTTP\/1\.1: .+ \(HPE_[A-Z_]+\)$/);

    const huge = statusOf(
      await rawExchange(`GET /version HTTP/1.1\r\nHost: x\r\nX-Big: ${'y'.repeat(20_000)}\r\n\r\n`),
    );
    expect(huge.head).toMatch(/^HTTP\/1\.1 431 Request Header Fields Too Large\r\n/);
    expect(huge.status).toMatchObject({ kind: 'Status', code: 431 });
    expect(huge.status.message).toBe(
      'the request headers are too large: the limit is 16384 bytes for the request line and headers together',
    );
    expect((await api(lab, 'GET', '/api/v1/namespaces/default/configmaps/big')).status).toBe(200);
  });
});
