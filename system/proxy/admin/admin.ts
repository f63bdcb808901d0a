// The admin interface (bootstrap admin.address; 19000 in deployments) with Envoy's endpoints, formats, headers,
// status codes and error texts: exact path match, POST required for mutating endpoints (405 otherwise), 404
// "invalid path." followed by the help text for anything else.
import http from 'node:http';
import type net from 'node:net';
import type { ServerInstance } from '../server-instance.ts';
import { adminHandlers, type Handler, type Reply, TEXT, text } from './handlers.ts';

export class AdminServer {
  private readonly srv: ServerInstance;
  private readonly server: http.Server;
  private readonly handlers: Handler[];

  constructor(srv: ServerInstance) {
    this.srv = srv;
    this.handlers = [
      {
        path: '/',
        help: 'Admin home page',
        mutates: false,
        run: () => ({ status: 200, body: this.homePage(), type: 'text/html; charset=UTF-8' }),
      },
      { path: '/help', help: 'print out list of admin commands', mutates: false, run: () => text(this.helpText()) },
      ...adminHandlers(srv),
    ];
    this.server = http.createServer((req, res) => {
      this.handle(req, res).catch((err) => {
        this.send(res, text(`internal error: ${(err as Error).message}\n`, 500));
      });
    });
  }

  listen(host: string, port: number): Promise<void> {
    return new Promise((resolve, reject) => {
      this.server.once('error', (err: NodeJS.ErrnoException) =>
        reject(
          new Error(
            `cannot bind admin address '${host}:${port}': ${err.code === 'EADDRINUSE' ? 'Address already in use' : err.message}`,
          ),
        ),
      );
      this.server.listen({ host, port }, () => resolve());
    });
  }

  address(): string {
    const a = this.server.address() as net.AddressInfo;
    return `${a.address.includes(':') ? `[${a.address}]` : a.address}:${a.port}`;
  }

  port(): number {
    return (this.server.address() as net.AddressInfo).port;
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  helpText(): string {
    const lines = ['admin commands are:'];
    for (const h of [...this.handlers].sort((a, b) => (a.path < b.path ? -1 : 1))) {
      lines.push(`  ${h.path}${h.mutates ? ' (POST)' : ''}: ${h.help}`);
      for (const [id, help] of h.params ?? []) lines.push(`      ${id}: ${help}`);
    }
    return lines.join('\n') + '\n';
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    const params = new URLSearchParams(q < 0 ? '' : url.slice(q + 1));
    const method = req.method ?? 'GET';
    // Drain any request body (forms post with one).
    req.resume();
    const h = this.handlers.find((x) => x.path === path);
    if (!h) {
      this.send(res, text(`invalid path. ${this.helpText()}`, 404));
      return;
    }
    if (h.mutates && method !== 'POST') {
      this.srv.logs.logger('admin').error(`admin path "${h.path}" mutates state, method=${method} rather than POST`);
      this.send(res, text(`Method ${method} not allowed, POST required.`, 405));
      return;
    }
    this.send(res, await h.run(params, method));
  }

  private send(res: http.ServerResponse, r: Reply): void {
    const body = Buffer.from(r.body);
    res.writeHead(r.status, {
      'content-type': r.type ?? TEXT,
      'cache-control': 'no-cache, max-age=0',
      'x-content-type-options': 'nosniff',
      server: 'envoy',
      'content-length': String(body.length),
    });
    res.end(body);
  }

  private homePage(): string {
    const rows = [...this.handlers]
      .sort((a, b) => (a.path < b.path ? -1 : 1))
      .map((h) => {
        const cmd = h.mutates
          ? `<form action="${h.path}" method="post"><button type="submit">${h.path}</button></form>`
          : `<a href="${h.path}">${h.path}</a>`;
        return `<tr><td class="home-data">${cmd}</td><td class="home-data">${h.help}</td></tr>`;
      })
      .join('\n');
    return `<!DOCTYPE html>\n<html lang="en"><head><title>Envoy Admin</title></head><body>\n<table class="home-table"><thead><tr><th>Command</th><th>Description</th></tr></thead><tbody>\n${rows}\n</tbody></table></body></html>\n`;
  }
}
