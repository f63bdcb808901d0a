// Connection-level behaviour of the HTTPS server, below requests: how its sockets feed Node's HTTP parser, and the
// answer to bytes that do not parse as HTTP/1.1 (Node's 'clientError'), which is a Kubernetes Status like every other
// error this server gives, never a bare status line.
//
// Why the parser reads from JavaScript: Node's HTTP server pauses a connection's parser when a request arrives while
// the previous response is still above the socket's high-water mark (a large response not yet drained), and resumes
// it on 'drain'. Over TLS the parser normally consumes the TLS stream in C++; pausing then stops reading from TCP, but
// the records TLS has already decrypted from that read are still handed to the paused parser, which fails with
// HPE_PAUSED ("Parse Error: Paused"). kubectl sends a large PATCH right after reading a large response on the same
// keep-alive connection (apply of big CRDs), so 16 of 130 such PATCHes failed with a 400 and an empty body. When the
// socket also has a 'data' listener, Node unconsumes the parser (lib/_http_server.js, socketListenerWrap) and feeds it
// from 'data' events, which pause() does stop: the same backpressure, without losing bytes. connection.test.ts sends
// kubectl's pattern from another thread and fails without this.
import { type Server as HttpServer, maxHeaderSize, STATUS_CODES } from 'node:http';
import type { Server } from 'node:https';
import type { Duplex } from 'node:stream';
import type { TLSSocket } from 'node:tls';
import type { Logger } from '../../../system/shared/log.ts';
import { ApiError } from './errors.ts';

/** A raw HTTP/1.1 response carrying `err` as a Status, closing the connection (upgrades, unparsable requests). */
export function rawStatusResponse(err: ApiError): string {
  const body = JSON.stringify(err.toStatus());
  return (
    `HTTP/1.1 ${err.code} ${STATUS_CODES[err.code] ?? 'Error'}\r\nContent-Type: application/json\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`
  );
}

/** The Status for a request Node's parser refused, with the limit that applied when there is one. */
export function clientErrorStatus(
  err: NodeJS.ErrnoException,
  maxHeaderSize: number,
  headersTimeoutMs: number,
): ApiError {
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW':
      return new ApiError(
        431,
        'BadRequest',
        `the request headers are too large: the limit is ${maxHeaderSize} bytes for the request line and headers together`,
      );
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return new ApiError(413, 'RequestEntityTooLarge', 'the request body has chunk extensions over 16384 bytes');
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new ApiError(
        408,
        'Timeout',
        `the request headers were not received within ${headersTimeoutMs / 1000} s of the connection's request start`,
      );
    default:
      return new ApiError(
        400,
        'BadRequest',
        `the request could not be parsed as HTTP/1.1: ${err.message}${err.code ? ` (${err.code})` : ''}`,
      );
  }
}

/** Installs both behaviours on the API server's HTTPS server (the loopback socket's plain one needs only the second). */
export function setupConnections(server: Server | HttpServer, log: Logger): void {
  server.on('secureConnection', (socket: TLSSocket) => {
    // Registered after the HTTP server's own listener (it is the constructor's), so the parser is set up and this
    // listener unconsumes it (see the header comment).
    socket.on('data', () => {});
  });
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    log.debug('client error', { err: err.message, code: err.code });
    // As Node's default handler: answer only if no response has started on this socket, else close it.
    const inFlight = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent;
    if (err.code === 'ECONNRESET' || !socket.writable || inFlight) {
      socket.destroy();
      return;
    }
    const limit = (server as { maxHeaderSize?: number }).maxHeaderSize ?? maxHeaderSize;
    socket.end(rawStatusResponse(clientErrorStatus(err, limit, server.headersTimeout)));
    // end() lets the answer reach a client that is still sending; one that never closes is cut after 5 s.
    setTimeout(() => socket.destroy(), 5000).unref();
  });
  server.on('tlsClientError', (err) => log.debug('TLS client error', { err }));
}
