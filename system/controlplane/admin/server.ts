// The control plane's admin server (contract 4.1): bound to localhost on 9095 and reached by port-forward. An HTML
// index links every endpoint with a description and has a form to set a component's log level; JSON endpoints honour
// ?pretty; profiles download in pprof format.
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { LEVELS, type Logger, type LogRegistry, parseLevel } from '../../shared/log.ts';
import type { CollectionDump } from '../krt/collection.ts';
import { cpuProfile, handlesProfile, heapProfile, PROFILES } from './pprof.ts';
import type { XdsView } from './xds-view.ts';

export interface AdminDeps {
  logs: LogRegistry;
  krt: () => CollectionDump[];
  xds: () => XdsView;
  metrics: () => Promise<string>;
  /** Shown on the index page (version, validation mode, ...). */
  info?: () => Record<string, string>;
  log?: Logger;
}

export interface AdminServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

export const ENDPOINTS: { path: string; href: string; description: string }[] = [
  {
    path: '/debug/pprof',
    href: '/debug/pprof/',
    description: 'Profiles of the control plane (CPU, heap, active handles), each downloadable in pprof format.',
  },
  {
    path: '/logging',
    href: '/logging',
    description:
      'The log level of each control plane component. POST ?level=<l> sets all, ?<component>=<l> sets one; or use the form below.',
  },
  {
    path: '/snapshots/krt',
    href: '/snapshots/krt?pretty',
    description:
      'The krt snapshot: every collection with its outputs, inputs and their dependencies, and whether it is synced.',
  },
  {
    path: '/snapshots/xds',
    href: '/snapshots/xds?pretty',
    description:
      'The xDS snapshot per connected gateway proxy: listeners, routes, clusters and endpoints as sent, versions and ACK/NACK state.',
  },
  { path: '/metrics', href: '/metrics', description: 'Metrics in the Prometheus text format.' },
];

const LEVEL_NAMES = LEVELS.filter((l) => l !== 'off');

function esc(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function send(
  res: ServerResponse,
  status: number,
  body: string | Buffer,
  type: string,
  extra: Record<string, string> = {},
): void {
  res.writeHead(status, {
    'content-type': type,
    'cache-control': 'no-cache, max-age=0',
    'x-content-type-options': 'nosniff',
    ...extra,
  });
  res.end(body);
}

const text = (res: ServerResponse, status: number, body: string) =>
  send(res, status, body, 'text/plain; charset=utf-8');

function json(res: ServerResponse, url: URL, value: unknown): void {
  const pretty = url.searchParams.has('pretty');
  send(res, 200, JSON.stringify(value, null, pretty ? 2 : undefined) + '\n', 'application/json');
}

function indexPage(deps: AdminDeps): string {
  const levels = deps.logs.levelsSnapshot();
  const info = deps.info?.() ?? {};
  const components = Object.keys(levels);
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>gwvendor control plane: admin</title>
<style>
body{font:15px/1.45 system-ui,sans-serif;max-width:56rem;margin:2rem auto;padding:0 1rem;color:#1d2330}
h1{font-size:1.4rem}h2{font-size:1.05rem;margin:1.4rem 0 .2rem}h2 a{font-family:ui-monospace,monospace}
p{margin:.2rem 0 .6rem}table{border-collapse:collapse}td,th{padding:.15rem .8rem .15rem 0;text-align:left}
code,select,button{font:13px ui-monospace,monospace}.muted{color:#5a6275}fieldset{border:1px solid #ccd;padding:.6rem 1rem}
</style></head><body>
<h1>gwvendor control plane: admin</h1>
<p class="muted">${Object.entries(info)
    .map(([k, v]) => `${esc(k)}: <code>${esc(v)}</code>`)
    .join(' · ')}</p>
${ENDPOINTS.map((e) => `<h2><a href="${esc(e.href)}">${esc(e.path)}</a></h2>\n<p>${esc(e.description)}</p>`).join('\n')}
<h2 id="set-level">Set a log level</h2>
<form method="post" action="/logging" id="logging-form">
<fieldset>
<label>Component <select name="component" id="component">
<option value="">(all components)</option>
${components.map((c) => `<option value="${esc(c)}">${esc(c)}</option>`).join('\n')}
</select></label>
<label>Level <select name="level" id="level">
${LEVEL_NAMES.map((l) => `<option value="${l}"${l === 'info' ? ' selected' : ''}>${l}</option>`).join('\n')}
</select></label>
<button type="submit" id="set-level-button">Set level</button>
</fieldset>
</form>
<h2>Current levels</h2>
<table id="levels">${components.map((c) => `<tr><td><code>${esc(c)}</code></td><td>${esc(levels[c])}</td></tr>`).join('')}</table>
</body></html>
`;
}

function pprofIndex(): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>/debug/pprof</title>
<style>body{font:15px/1.45 system-ui,sans-serif;max-width:56rem;margin:2rem auto;padding:0 1rem}a{font-family:ui-monospace,monospace}</style>
</head><body>
<h1>/debug/pprof</h1>
<p>Profiles in pprof format (gzipped protobuf). Read them with <code>go tool pprof</code> or any pprof viewer, e.g.
<code>go tool pprof -http=: http://localhost:9095/debug/pprof/heap</code>.</p>
<table>
${PROFILES.map((p) => `<tr><td><a href="${esc(p.href)}">${esc(p.name)}</a></td><td>${esc(p.description)}</td></tr>`).join('\n')}
</table>
<p><a href="/">back to the index</a></p>
</body></html>
`;
}

function loggingText(logs: LogRegistry): string {
  const levels = logs.levelsSnapshot();
  return `current log levels:\n---\n${Object.entries(levels)
    .map(([c, l]) => `${c}: ${l}`)
    .join('\n')}\n`;
}

const LOGGING_USAGE = `usage: POST /logging?level=<level> (every component), POST /logging?<component>=<level> (one component)
levels: ${LEVEL_NAMES.join(', ')}
`;

async function readBody(req: IncomingMessage, limit = 64 * 1024): Promise<string> {
  const chunks: Buffer[] = [];
  let n = 0;
  for await (const c of req) {
    n += (c as Buffer).length;
    if (n > limit) throw new Error('request body too large');
    chunks.push(c as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

async function handleLogging(deps: AdminDeps, req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
  const method = req.method ?? 'GET';
  if (method === 'GET' || method === 'HEAD') {
    if ([...url.searchParams.keys()].length) {
      text(res, 405, 'changing log levels needs POST or PUT\n' + LOGGING_USAGE);
      return;
    }
    text(res, 200, loggingText(deps.logs));
    return;
  }
  if (method !== 'POST' && method !== 'PUT') {
    text(res, 405, `method ${method} not allowed\n${LOGGING_USAGE}`);
    return;
  }
  const changes: [string, string][] = [...url.searchParams.entries()];
  let fromForm = false;
  if ((req.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded')) {
    const form = new URLSearchParams(await readBody(req));
    const level = form.get('level');
    if (level !== null) {
      fromForm = true;
      const component = form.get('component') ?? '';
      changes.push([component === '' ? 'level' : component, level]);
    }
  }
  const errors: string[] = [];
  const known = new Set(deps.logs.components());
  const applied: string[] = [];
  for (const [key, value] of changes) {
    const level = parseLevel(value);
    if (!level || level === 'off') {
      errors.push(`invalid level: ${value} (use ${LEVEL_NAMES.join(', ')})`);
      continue;
    }
    if (key === 'level') {
      deps.logs.setAll(level);
      applied.push(`all: ${level}`);
    } else if (!known.has(key)) {
      errors.push(`unknown component: ${key} (components: ${[...known].join(', ')})`);
    } else {
      deps.logs.setLevel(key, level);
      applied.push(`${key}: ${level}`);
    }
  }
  if (errors.length) {
    text(res, 400, `${errors.join('\n')}\n\n${LOGGING_USAGE}`);
    return;
  }
  if (applied.length) deps.log?.info('log levels changed', { changes: applied });
  if (fromForm) {
    res.writeHead(303, { location: '/logging', 'cache-control': 'no-cache, max-age=0' });
    res.end();
    return;
  }
  text(res, 200, loggingText(deps.logs));
}

async function handle(deps: AdminDeps, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://localhost');
  const path = url.pathname.replace(/\/+$/, '') || '/';
  switch (path) {
    case '/':
      send(res, 200, indexPage(deps), 'text/html; charset=utf-8');
      return;
    case '/logging':
      await handleLogging(deps, req, res, url);
      return;
    case '/snapshots/krt':
      json(res, url, deps.krt());
      return;
    case '/snapshots/xds':
      json(res, url, deps.xds());
      return;
    case '/metrics':
      send(res, 200, await deps.metrics(), 'text/plain; version=0.0.4; charset=utf-8');
      return;
    case '/debug/pprof':
      send(res, 200, pprofIndex(), 'text/html; charset=utf-8');
      return;
    case '/debug/pprof/profile': {
      const raw = url.searchParams.get('seconds') ?? '10';
      const seconds = Number(raw);
      if (!Number.isFinite(seconds) || seconds <= 0 || seconds > 120) {
        text(res, 400, `invalid seconds: ${raw} (use a number from 0 to 120)\n`);
        return;
      }
      const body = await cpuProfile(seconds);
      send(res, 200, body, 'application/octet-stream', {
        'content-disposition': 'attachment; filename="profile.pb.gz"',
      });
      return;
    }
    case '/debug/pprof/heap':
      send(res, 200, await heapProfile(), 'application/octet-stream', {
        'content-disposition': 'attachment; filename="heap.pb.gz"',
      });
      return;
    case '/debug/pprof/handles':
      send(res, 200, handlesProfile(), 'application/octet-stream', {
        'content-disposition': 'attachment; filename="handles.pb.gz"',
      });
      return;
    default:
      text(
        res,
        404,
        `no such endpoint: ${url.pathname}\nendpoints:\n${ENDPOINTS.map((e) => `  ${e.path}: ${e.description}`).join('\n')}\n`,
      );
  }
}

export async function startAdminServer(
  deps: AdminDeps,
  opts: { host?: string; port?: number } = {},
): Promise<AdminServer> {
  const host = opts.host ?? '127.0.0.1';
  const server = http.createServer((req, res) => {
    handle(deps, req, res).catch((err) => {
      deps.log?.error('admin request failed', { path: req.url, err: err as Error });
      if (!res.headersSent) text(res, 500, `error: ${(err as Error).message}\n`);
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (e: NodeJS.ErrnoException) =>
      reject(new Error(`admin server: cannot listen on ${host}:${opts.port ?? 9095}: ${e.code ?? e.message}`)),
    );
    server.listen({ host, port: opts.port ?? 9095 }, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  deps.log?.info('admin server listening', { address: `${host}:${port}` });
  return {
    url: `http://${host}:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
