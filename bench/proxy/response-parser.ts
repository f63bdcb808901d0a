// The open-loop generator's HTTP/1.1 response parser for one keep-alive connection: status line, then a body by
// Content-Length or chunked (RFC 9112 sections 6 and 7.1; no trailers). It allocates little per response, so the
// generator's own GC stays out of the latencies it measures (see generator.ts).

/** Returns the connection's data handler; it calls `onResponse(status)` once per complete response. */
export function responseParser(onResponse: (status: number) => void): (chunk: Buffer) => void {
  let buf: Buffer | undefined;
  /** 0 head, 1 body by length, 2 chunk size line, 3 chunk data (+CRLF), 4 the CRLF after the last chunk. */
  let state = 0;
  let remaining = 0;
  let status = 0;
  /** Consumes the `remaining` bytes of a body or chunk; false when the data ends first (the rest comes later). */
  const skipBody = (): boolean => {
    if (buf!.length < remaining) {
      remaining -= buf!.length;
      buf = undefined;
      return false;
    }
    buf = buf!.subarray(remaining);
    return true;
  };
  return (chunk) => {
    buf = buf && buf.length > 0 ? Buffer.concat([buf, chunk]) : chunk;
    for (;;) {
      if (state === 0) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        const head = buf.toString('latin1', 0, end);
        status = Number(head.slice(9, 12));
        buf = buf.subarray(end + 4);
        if (/\r\ntransfer-encoding:[ \t]*chunked/i.test(head)) state = 2;
        else {
          remaining = Number(/\r\ncontent-length:[ \t]*(\d+)/i.exec(head)?.[1] ?? 0);
          state = 1;
        }
      }
      if (state === 1) {
        if (!skipBody()) return;
        state = 0;
        onResponse(status);
        continue;
      }
      if (state === 2) {
        const eol = buf.indexOf('\r\n');
        if (eol < 0) return;
        const size = Number.parseInt(buf.toString('latin1', 0, eol), 16);
        buf = buf.subarray(eol + 2);
        if (size === 0) state = 4;
        else {
          remaining = size + 2;
          state = 3;
        }
      }
      if (state === 3) {
        if (!skipBody()) return;
        state = 2;
        continue;
      }
      if (state === 4) {
        if (buf.length < 2) return;
        buf = buf.subarray(2);
        state = 0;
        onResponse(status);
      }
    }
  };
}
