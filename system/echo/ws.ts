// The echo's WebSocket endpoint `/ws`, after upstream's echo-basic (Gateway API v1.6.1 conformance/echo-basic/
// echo-basic.go: `httpMux.Handle("/ws", websocket.Handler(wsHandler))`, wsHandler `io.Copy(ws, ws)`): every frame
// received is sent back (text as text, binary as binary), and the connection closes when the client closes it.
// golang.org/x/net/websocket's Handler refuses a handshake without an Origin header (checkOrigin: "null origin",
// 403 Forbidden), so this one does too. The WebSocket protocol itself comes from the `ws` package.
import type http from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import { routedPath } from './response.ts';

/** Handles a server's 'upgrade' requests: /ws becomes an echoing WebSocket, anything else is closed with a 400. */
export function wsUpgradeHandler(log: (line: string) => void = () => {}) {
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false });
  const refuse = (sock: Duplex, code: number, text: string) => {
    sock.end(`HTTP/1.1 ${code} ${text}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`);
  };
  const onUpgrade = (req: http.IncomingMessage, sock: Duplex, head: Buffer) => {
    sock.on('error', () => sock.destroy());
    if (routedPath(req.url ?? '/') !== '/ws' || (req.headers.upgrade ?? '').toLowerCase() !== 'websocket') {
      refuse(sock, 400, 'Bad Request');
      return;
    }
    if (!req.headers.origin) {
      refuse(sock, 403, 'Forbidden');
      return;
    }
    wss.handleUpgrade(req, sock, head, (ws) => {
      log(`established websocket connection ${req.socket.remoteAddress}:${req.socket.remotePort}`);
      ws.on('message', (data, isBinary) => ws.send(data, { binary: isBinary }));
      ws.on('error', () => ws.terminate());
    });
  };
  return {
    onUpgrade,
    /** Closes every open WebSocket (the server's close). */
    closeAll(): void {
      for (const c of wss.clients) c.terminate();
      wss.close();
    },
  };
}
