// The bytes of a watch response: events are written to the socket as ready-made HTTP/1.1 chunks (one event per
// chunk, shared by every watcher), so the framing is checked here on a raw TLS socket: chunk sizes match, the stream
// ends with the zero-length chunk and the connection is then reused.
import tls from 'node:tls';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { chunk } from './handlers/watch.ts';
import { startTestLab, type TestLab } from './testing/test-lab.ts';

let lab: TestLab;
beforeAll(async () => {
  lab = await startTestLab({ watchKeepAliveMs: 200 });
});
afterAll(async () => {
  await lab?.stop();
});

/** Sends raw requests (pipelined) on one TLS connection; collects everything until `done(bytes)` or the close. */
function raw(requests: string[], done: (all: string) => boolean): Promise<string> {
  const u = new URL(lab.server.url);
  return new Promise((resolve, reject) => {
    const s = tls.connect({ host: u.hostname, port: Number(u.port), ca: lab.server.caPem, servername: 'localhost' });
    let all = '';
    s.on('secureConnect', () => s.write(requests.join('')));
    s.on('data', (d) => {
      all += d.toString('latin1');
      if (done(all)) {
        s.destroy();
        resolve(all);
      }
    });
    s.on('close', () => resolve(all));
    s.on('error', reject);
    s.setTimeout(10_000, () => s.destroy(new Error(`timeout; got ${all.slice(0, 2000)}`)));
  });
}

/** Decodes a chunked body; throws on a malformed frame. Returns the chunks and what follows the last one. */
function dechunk(body: string): { chunks: string[]; rest: string; ended: boolean } {
  const chunks: string[] = [];
  let i = 0;
  for (;;) {
    const nl = body.indexOf('\r\n', i);
    if (nl < 0) return { chunks, rest: body.slice(i), ended: false };
    const size = Number.parseInt(body.slice(i, nl), 16);
    if (!Number.isInteger(size)) throw new Error(`bad chunk size at ${i}: ${JSON.stringify(body.slice(i, i + 20))}`);
    if (size === 0) return { chunks, rest: body.slice(nl + 4), ended: body.slice(nl + 2, nl + 4) === '\r\n' };
    const data = body.slice(nl + 2, nl + 2 + size);
    if (body.slice(nl + 2 + size, nl + 4 + size) !== '\r\n') throw new Error(`chunk not followed by CRLF at ${i}`);
    chunks.push(data);
    i = nl + 4 + size;
  }
}

const req = (path: string, version = '1.1') =>
  `GET ${path} HTTP/${version}\r\nHost: x\r\nAuthorization: Bearer ${lab.server.adminToken}\r\n\r\n`;

it('one event per chunk, keep-alive chunks, the zero chunk at the end, then the connection is reused', async () => {
  await lab.k(['create', 'namespace', 'wire']);
  for (const n of ['a', 'b', 'c']) await lab.k(['create', 'configmap', n, '-n', 'wire', '--from-literal=k=v']);
  const watch = '/api/v1/namespaces/wire/configmaps?watch=true&timeoutSeconds=1&allowWatchBookmarks=false';
  const all = await raw(
    [req(watch), req('/api/v1/namespaces/wire/configmaps/a')],
    (s) => s.includes('"name":"a"') && s.lastIndexOf('HTTP/1.1 200') > 0 && s.trimEnd().endsWith('}'),
  );
  const [head1, ...rest] = all.split('\r\n\r\n');
  expect(head1).toMatch(/^HTTP\/1\.1 200/);
  expect(head1.toLowerCase()).toContain('transfer-encoding: chunked');
  const { chunks, rest: after, ended } = dechunk(rest.join('\r\n\r\n'));
  expect(ended).toBe(true);
  const events = chunks
    .filter((c) => c !== '\n')
    .map((c) => {
      expect(c.endsWith('\n')).toBe(true);
      return JSON.parse(c);
    });
  expect(events.map((e) => [e.type, e.object.metadata.name])).toEqual([
    ['ADDED', 'a'],
    ['ADDED', 'b'],
    ['ADDED', 'c'],
  ]);
  expect(chunks.filter((c) => c === '\n').length).toBeGreaterThanOrEqual(2); // keep-alives every 200 ms
  // The same connection answers the next (pipelined) request once the watch has ended.
  expect(after).toMatch(/^HTTP\/1\.1 200/);
});

it('an event chunk owns exactly its bytes: kept in the watch history, it must not pin a slab of the Buffer pool', () => {
  // A Node status event is ~4 KB; a slice of the shared pool would keep its 64 KiB slab alive with it.
  const line = `${JSON.stringify({ type: 'MODIFIED', object: { kind: 'Node', pad: 'x'.repeat(4000) } })}\n`;
  const c = chunk(line);
  expect(c.buffer.byteLength).toBe(c.length);
  expect(c.toString('latin1')).toBe(`${Buffer.byteLength(line).toString(16)}\r\n${line}\r\n`);
});
