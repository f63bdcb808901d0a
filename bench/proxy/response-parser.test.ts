// bench:proxy's generator counts a request as answered when this parser has seen its whole response: bodies by
// Content-Length and chunked (RFC 9112 sections 6.3 and 7.1), split anywhere across TCP reads, several per read.
import { describe, expect, it } from 'vitest';
import { responseParser } from './response-parser.ts';

const feed = (chunks: string[]) => {
  const statuses: number[] = [];
  const parse = responseParser((s) => statuses.push(s));
  for (const c of chunks) parse(Buffer.from(c, 'latin1'));
  return statuses;
};

const byLength = 'HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello';
const chunked = 'HTTP/1.1 404 Not Found\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n';

describe('responseParser', () => {
  it('reports one status per complete response, Content-Length and chunked alike', () => {
    expect(feed([byLength])).toEqual([200]);
    expect(feed([chunked])).toEqual([404]);
  });

  it('reports responses that arrive together in one read, in order', () => {
    expect(feed([byLength + chunked + byLength])).toEqual([200, 404, 200]);
  });

  it('waits for the rest of a response split at any byte', () => {
    const both = byLength + chunked;
    for (let cut = 1; cut < both.length; cut++) {
      const statuses: number[] = [];
      const parse = responseParser((s) => statuses.push(s));
      parse(Buffer.from(both.slice(0, cut), 'latin1'));
      expect(statuses.length).toBe(cut >= byLength.length ? 1 : 0);
      parse(Buffer.from(both.slice(cut), 'latin1'));
      expect(statuses).toEqual([200, 404]);
    }
  });

  it('takes a response without Content-Length or chunking as having no body', () => {
    expect(feed(['HTTP/1.1 204 No Content\r\n\r\n', byLength])).toEqual([204, 200]);
  });
});
