// The httpbin-style sample application, following go-httpbin's conventions (the backend gateway docs use).
// It is also the "direct" baseline of the proxy benchmark, so the hot path is plain node:http with no framework:
// routing is a switch on the first path segment and responses carry an explicit Content-Length (no chunking).
import { isUtf8 } from 'node:buffer';
import { randomBytes, randomUUID } from 'node:crypto';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import { hostname } from 'node:os';
import { type ListeningService, listenHttp } from '../shared/sample-service.ts';
import { type LineWriter, stdoutWriter } from './accesslog.ts';
import { canonicalHeaderName, clientIp, queryArgs, requestHeaders, requestUrl, sortKeys } from './request.ts';
import { chooseStatus, parseStatusSpec, StatusSpecError } from './status.ts';

/** `/delay/{s}` waits at most this long (httpbin's cap). */
export const MAX_DELAY_SECONDS = 10;
/** `/bytes/{n}` returns at most this many bytes (httpbin's cap). */
export const MAX_BYTES = 100 * 1024;
/** `/stream/{n}` writes at most this many lines (httpbin's cap). */
export const MAX_STREAM_LINES = 100;
/** `/redirect/{n}` and its relative/absolute forms accept at most this many hops. */
export const MAX_REDIRECTS = 100;
/** Request bodies echoed by `/anything` and friends are read up to this size; larger ones get 413. */
export const MAX_BODY_BYTES = 1024 * 1024;

const JSON_TYPE = 'application/json; charset=utf-8';
const PREFLIGHT_METHODS = 'GET, POST, HEAD, PUT, DELETE, PATCH, OPTIONS';
const GET_ONLY = 'GET, HEAD, OPTIONS';

export interface SampleAppOptions {
  /** Default 127.0.0.1 (a test helper); the command line listens on 0.0.0.0. */
  host?: string;
  /** Default 0 (any free port); the command line defaults to 8080. */
  port?: number;
  /** Where access log lines go: `'stdout'`, a function receiving each JSON line, or false (default) for none. */
  accessLog?: 'stdout' | false | ((line: string) => void);
  /** Cap of `/delay/{s}`, default MAX_DELAY_SECONDS (tests lower it to check the cap without waiting 10 s). */
  maxDelaySeconds?: number;
  /** Serve HTTPS with this certificate and key (PEM): `--tls`, for BackendTLSPolicy. */
  tls?: { cert: string; key: string };
  /** Answer every request with this status (`--fail-status`): a backend gone bad, for outlier detection. */
  failStatus?: number;
}

export type SampleApp = ListeningService;

interface Limits {
  maxDelaySeconds: number;
  failStatus?: number;
}

interface Ctx {
  limits: Limits;
  start: number;
  bytes: number;
  path: string;
  query: string;
}

class HttpError extends Error {
  readonly status: number;
  constructor(status: number, detail: string) {
    super(detail);
    this.status = status;
  }
}

export async function startSampleApp(opts: SampleAppOptions = {}): Promise<SampleApp> {
  const host = opts.host ?? '127.0.0.1';
  let writer: LineWriter | undefined;
  let sink: ((line: string) => void) | undefined;
  if (opts.accessLog === 'stdout') {
    writer = stdoutWriter();
    sink = writer.write;
  } else if (typeof opts.accessLog === 'function') {
    sink = opts.accessLog;
  }

  const limits: Limits = {
    maxDelaySeconds: opts.maxDelaySeconds ?? MAX_DELAY_SECONDS,
    ...(opts.failStatus ? { failStatus: opts.failStatus } : {}),
  };
  return listenHttp('sampleapp', (req, res) => handle(req, res, sink, limits), {
    host,
    port: opts.port,
    onClosed: () => writer?.flush(),
    ...(opts.tls ? { tls: opts.tls } : {}),
  });
}

function handle(
  req: IncomingMessage,
  res: ServerResponse,
  sink: ((line: string) => void) | undefined,
  limits: Limits,
): void {
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  const ctx: Ctx = {
    limits,
    start: performance.now(),
    bytes: 0,
    path: q < 0 ? url : url.slice(0, q),
    query: q < 0 ? '' : url.slice(q + 1),
  };
  if (sink) res.once('close', () => sink(accessLine(req, res, ctx)));

  // CORS on every response, as go-httpbin's middleware does.
  const origin = req.headers.origin;
  res.setHeader('Access-Control-Allow-Origin', origin && origin !== '' ? origin : '*');
  res.setHeader('Access-Control-Allow-Credentials', 'true');
  if (req.method === 'OPTIONS') {
    res.setHeader('Access-Control-Allow-Methods', PREFLIGHT_METHODS);
    res.setHeader('Access-Control-Max-Age', '3600');
    const requested = req.headers['access-control-request-headers'];
    if (requested) res.setHeader('Access-Control-Allow-Headers', requested);
    res.writeHead(200, { 'Content-Length': '0' });
    res.end();
    return;
  }

  if (limits.failStatus) {
    const body = `failing on purpose (--fail-status ${limits.failStatus})\n`;
    res.writeHead(limits.failStatus, { 'Content-Type': 'text/plain', 'Content-Length': Buffer.byteLength(body) });
    res.end(body);
    return;
  }
  try {
    const done = route(req, res, ctx);
    if (done) done.catch((err) => fail(res, ctx, err));
  } catch (err) {
    fail(res, ctx, err);
  }
}

function fail(res: ServerResponse, ctx: Ctx, err: unknown): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  if (err instanceof MethodError) res.setHeader('Allow', err.allow);
  if (err instanceof HttpError) sendError(res, ctx, err.status, err.message);
  else sendError(res, ctx, 500, err instanceof Error ? err.message : String(err));
}

/** Returns a promise for endpoints that finish asynchronously (body reads), so their failures are answered too. */
function route(req: IncomingMessage, res: ServerResponse, ctx: Ctx): Promise<void> | undefined {
  const path = ctx.path;
  const slash = path.indexOf('/', 1);
  const head = slash < 0 ? path.slice(1) : path.slice(1, slash);
  const rest = slash < 0 ? undefined : path.slice(slash + 1);
  const method = req.method ?? 'GET';

  switch (head) {
    case '':
      if (path !== '/') break;
      getOnly(method);
      sendJson(res, ctx, 200, index(ctx));
      return;
    case 'headers':
      if (rest !== undefined) break;
      getOnly(method);
      sendJson(res, ctx, 200, { headers: requestHeaders(req) });
      return;
    case 'get':
      if (rest !== undefined) break;
      getOnly(method);
      sendJson(res, ctx, 200, getShape(req, ctx));
      return;
    case 'anything':
      return echoBody(req, res, ctx);
    case 'post':
    case 'put':
    case 'patch':
    case 'delete':
      if (rest !== undefined) break;
      if (method !== head.toUpperCase()) {
        throw new MethodError(head.toUpperCase() + ', OPTIONS');
      }
      return echoBody(req, res, ctx);
    case 'ip':
      if (rest !== undefined) break;
      getOnly(method);
      sendJson(res, ctx, 200, { origin: clientIp(req) });
      return;
    case 'uuid':
      if (rest !== undefined) break;
      getOnly(method);
      sendJson(res, ctx, 200, { uuid: randomUUID() });
      return;
    case 'hostname':
      if (rest !== undefined) break;
      getOnly(method);
      // The lab's pod runtime makes os.hostname() return the pod name, as in a container.
      sendJson(res, ctx, 200, { hostname: hostname() });
      return;
    case 'status':
      if (rest === undefined || rest.includes('/')) break;
      status(res, ctx, rest);
      return;
    case 'delay':
      if (rest === undefined || rest.includes('/')) break;
      delay(req, res, ctx, rest);
      return;
    case 'response-headers':
      if (rest !== undefined) break;
      responseHeaders(res, ctx);
      return;
    case 'bytes':
      if (rest === undefined || rest.includes('/')) break;
      getOnly(method);
      bytes(res, ctx, rest);
      return;
    case 'stream':
      if (rest === undefined || rest.includes('/')) break;
      getOnly(method);
      stream(req, res, ctx, rest);
      return;
    case 'redirect':
    case 'relative-redirect':
    case 'absolute-redirect':
      if (rest === undefined || rest.includes('/')) break;
      getOnly(method);
      redirect(req, res, ctx, head, rest);
      return;
  }
  throw new HttpError(404, `no endpoint at ${path}: see GET / for the list`);
}

class MethodError extends HttpError {
  readonly allow: string;
  constructor(allow: string) {
    super(405, `method not allowed: use ${allow}`);
    this.allow = allow;
  }
}

function getOnly(method: string): void {
  if (method !== 'GET' && method !== 'HEAD') throw new MethodError(GET_ONLY);
}

// --- responses -------------------------------------------------------------------------------------------------

function sendJson(res: ServerResponse, ctx: Ctx, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  const len = Buffer.byteLength(text);
  ctx.bytes += len;
  res.writeHead(status, { 'Content-Type': JSON_TYPE, 'Content-Length': len });
  res.end(text);
}

function sendEmpty(res: ServerResponse, status: number): void {
  res.writeHead(status, { 'Content-Length': '0' });
  res.end();
}

/** go-httpbin's error body: `{"status_code": 400, "error": "Bad Request", "detail": "..."}`. */
function sendError(res: ServerResponse, ctx: Ctx, status: number, detail: string): void {
  sendJson(res, ctx, status, { status_code: status, error: http.STATUS_CODES[status] ?? 'Error', detail });
}

function getShape(req: IncomingMessage, ctx: Ctx) {
  return {
    args: queryArgs(ctx.query),
    headers: requestHeaders(req),
    method: req.method,
    origin: clientIp(req),
    url: requestUrl(req),
  };
}

function index(ctx: Ctx) {
  return {
    name: 'gwlab sampleapp',
    conventions: 'go-httpbin',
    endpoints: [
      'GET /headers',
      'GET /get',
      '* /anything[/...]',
      'POST /post, PUT /put, PATCH /patch, DELETE /delete',
      '* /status/{code} or /status/{code:weight,...}',
      `* /delay/{seconds} (at most ${ctx.limits.maxDelaySeconds})`,
      '* /response-headers?Name=value',
      'GET /ip',
      'GET /uuid',
      'GET /hostname',
      `GET /bytes/{n} (at most ${MAX_BYTES}; ?seed=N for repeatable bytes)`,
      `GET /stream/{n} (at most ${MAX_STREAM_LINES} lines)`,
      'GET /redirect/{n} (?absolute=true), /relative-redirect/{n}, /absolute-redirect/{n}',
      'OPTIONS * (CORS preflight)',
    ],
  };
}

// --- endpoints -------------------------------------------------------------------------------------------------

async function echoBody(req: IncomingMessage, res: ServerResponse, ctx: Ctx): Promise<void> {
  const body = await readBody(req);
  const type = (req.headers['content-type'] ?? '').toLowerCase();
  let json: unknown = null;
  let form: Record<string, string[]> = {};
  if (type.startsWith('application/json') && body.length > 0) {
    try {
      json = JSON.parse(body.toString('utf8'));
    } catch (err) {
      throw new HttpError(400, `invalid JSON request body: ${(err as Error).message}`);
    }
  } else if (type.startsWith('application/x-www-form-urlencoded')) {
    form = queryArgs(body.toString('utf8'));
  }
  const data =
    body.length === 0
      ? ''
      : isUtf8(body)
        ? body.toString('utf8')
        : `data:${type || 'application/octet-stream'};base64,${body.toString('base64')}`;
  sendJson(res, ctx, 200, { ...getShape(req, ctx), data, files: {}, form, json });
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      // Keep draining so the connection stays usable, but stop keeping the bytes.
      if (size > MAX_BODY_BYTES) tooLarge = true;
      else chunks.push(chunk);
    });
    req.on('end', () => {
      if (tooLarge) reject(new HttpError(413, `request body larger than ${MAX_BODY_BYTES} bytes`));
      else resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks));
    });
    req.on('error', reject);
  });
}

function status(res: ServerResponse, ctx: Ctx, spec: string): void {
  let code: number;
  try {
    code = chooseStatus(parseStatusSpec(spec));
  } catch (err) {
    if (err instanceof StatusSpecError) throw new HttpError(400, err.message);
    throw err;
  }
  switch (code) {
    case 301:
    case 302:
    case 303:
    case 305:
    case 307:
    case 308:
      res.setHeader('Location', '/redirect/1');
      break;
    case 401:
      res.setHeader('WWW-Authenticate', 'Basic realm="Fake Realm"');
      break;
    case 407:
      res.setHeader('Proxy-Authenticate', 'Basic realm="Fake Realm"');
      break;
    case 418: {
      const text = "I'm a teapot!";
      ctx.bytes += text.length;
      res.writeHead(418, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': text.length });
      res.end(text);
      return;
    }
  }
  sendEmpty(res, code);
}

/** Seconds as a number (`1.5`) or a duration with a unit (`1500ms`, `1.5s`). */
export function parseDelaySeconds(text: string): number {
  const m = /^(\d+(?:\.\d+)?|\.\d+)(ms|s)?$/.exec(text);
  if (!m) throw new HttpError(400, `invalid delay ${JSON.stringify(text)}: use seconds such as 1, 0.5 or 500ms`);
  const value = Number(m[1]);
  return m[2] === 'ms' ? value / 1000 : value;
}

function delay(req: IncomingMessage, res: ServerResponse, ctx: Ctx, text: string): void {
  const seconds = Math.min(parseDelaySeconds(text), ctx.limits.maxDelaySeconds);
  const timer = setTimeout(() => sendJson(res, ctx, 200, getShape(req, ctx)), seconds * 1000);
  // A client (or a proxy's timeout) that gives up frees the timer at once.
  res.once('close', () => clearTimeout(timer));
}

const FRAMING_HEADERS = new Set(['content-length', 'transfer-encoding', 'connection']);

function responseHeaders(res: ServerResponse, ctx: Ctx): void {
  const args = queryArgs(ctx.query);
  res.setHeader('Content-Type', JSON_TYPE);
  for (const [name, values] of Object.entries(args)) {
    if (FRAMING_HEADERS.has(name.toLowerCase())) {
      throw new HttpError(400, `response-headers: ${name} cannot be set, it would break the response framing`);
    }
    try {
      res.setHeader(canonicalHeaderName(name), values.length === 1 ? values[0] : values);
    } catch (err) {
      throw new HttpError(400, `response-headers: invalid header ${JSON.stringify(name)}: ${(err as Error).message}`);
    }
  }
  const shown: Record<string, string[]> = {};
  for (const [name, value] of Object.entries(res.getHeaders())) {
    if (value === undefined) continue;
    shown[canonicalHeaderName(name)] = Array.isArray(value) ? value.map(String) : [String(value)];
  }
  const text = JSON.stringify(sortKeys(shown));
  const len = Buffer.byteLength(text);
  ctx.bytes += len;
  res.writeHead(200, { 'Content-Length': len });
  res.end(text);
}

function parseCount(what: string, text: string): number {
  if (!/^\d{1,9}$/.test(text)) throw new HttpError(400, `invalid ${what} ${JSON.stringify(text)}: use an integer >= 0`);
  return Number(text);
}

function bytes(res: ServerResponse, ctx: Ctx, text: string): void {
  const n = Math.min(parseCount('byte count', text), MAX_BYTES);
  const seedText = new URLSearchParams(ctx.query).get('seed');
  let buf: Buffer;
  if (seedText !== null) {
    if (!/^-?\d{1,15}$/.test(seedText))
      throw new HttpError(400, `invalid seed ${JSON.stringify(seedText)}: use an integer`);
    buf = seededBytes(Number(seedText), n);
  } else {
    buf = randomBytes(n);
  }
  ctx.bytes += n;
  res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Content-Length': n });
  res.end(buf);
}

/** Repeatable bytes for a seed (mulberry32): the same seed always gives the same body. */
function seededBytes(seed: number, n: number): Buffer {
  const buf = Buffer.allocUnsafe(n);
  let a = seed >>> 0;
  for (let i = 0; i < n; i++) {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    buf[i] = ((t ^ (t >>> 14)) >>> 0) & 0xff;
  }
  return buf;
}

function stream(req: IncomingMessage, res: ServerResponse, ctx: Ctx, text: string): void {
  const n = Math.min(parseCount('line count', text), MAX_STREAM_LINES);
  const shape = getShape(req, ctx);
  res.writeHead(200, { 'Content-Type': JSON_TYPE });
  for (let id = 0; id < n; id++) {
    const line = JSON.stringify({ id, url: shape.url, args: shape.args, headers: shape.headers, origin: shape.origin });
    ctx.bytes += Buffer.byteLength(line) + 1;
    res.write(line + '\n');
  }
  res.end();
}

function redirect(req: IncomingMessage, res: ServerResponse, ctx: Ctx, kind: string, text: string): void {
  const n = parseCount('redirect count', text);
  if (n < 1 || n > MAX_REDIRECTS) {
    throw new HttpError(400, `invalid redirect count ${n}: use 1 to ${MAX_REDIRECTS}`);
  }
  const absolute =
    kind === 'absolute-redirect' ||
    (kind === 'redirect' && new URLSearchParams(ctx.query).get('absolute')?.toLowerCase() === 'true');
  const next = n === 1 ? '/get' : `/${absolute ? 'absolute' : 'relative'}-redirect/${n - 1}`;
  const base = absolute ? requestUrl(req).slice(0, -(req.url ?? '/').length) : '';
  res.setHeader('Location', base + next);
  sendEmpty(res, 302);
}

// --- access log ------------------------------------------------------------------------------------------------

// Built by hand rather than JSON.stringify of a record: this runs once per request on the benchmark's baseline.
// The output is the same JSON-lines shape as system/shared/log.ts: {ts, level, component, msg, ...fields}.
function accessLine(req: IncomingMessage, res: ServerResponse, ctx: Ctx): string {
  const duration = Math.round((performance.now() - ctx.start) * 1000) / 1000;
  let line =
    `{"ts":"${isoNow()}","level":"info","component":"sampleapp","msg":"access"` +
    `,"method":${JSON.stringify(req.method)},"uri":${JSON.stringify(req.url)}` +
    `,"status":${res.statusCode},"bytes":${ctx.bytes},"duration_ms":${duration}` +
    `,"client_ip":${JSON.stringify(clientIp(req))}`;
  const host = req.headers.host;
  if (host !== undefined) line += `,"host":${JSON.stringify(host)}`;
  const ua = req.headers['user-agent'];
  if (ua !== undefined) line += `,"user_agent":${JSON.stringify(ua)}`;
  // The client went away before the response was complete (a proxy timeout, a cancelled curl).
  if (!res.writableFinished) line += ',"aborted":true';
  return line + '}';
}

let lastMs = 0;
let lastIso = '';

/** new Date().toISOString(), computed at most once per millisecond. */
function isoNow(): string {
  const ms = Date.now();
  if (ms !== lastMs) {
    lastMs = ms;
    lastIso = new Date(ms).toISOString();
  }
  return lastIso;
}
