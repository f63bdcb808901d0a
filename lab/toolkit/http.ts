// HTTP through a gateway with the Gateway API conformance suite's eventual consistency: a request is retried until it
// meets the expectation on `consecutive` successive tries (default 3), polling every 100 ms, for up to 30 s.
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, request as undiciRequest } from 'undici';
import { WaitTimeout } from './wait.ts';

export interface HttpRequest {
  /** Base URL of the gateway, e.g. http://127.192.0.1:80 or http://localhost:18080 */
  url: string;
  path?: string;
  method?: string;
  host?: string;
  headers?: Record<string, string>;
  body?: string;
  timeoutMs?: number;
}

export interface HttpResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** Parsed JSON body when the response is JSON. */
  json?: any;
  ms: number;
}

export interface HttpExpectation {
  status?: number | number[];
  /** Header values that must be present (lower-case names); `null` means the header must be absent. */
  headers?: Record<string, string | RegExp | null>;
  body?: string | RegExp;
  /** Any further check; return a string describing the mismatch, or undefined when it matches. */
  check?: (res: HttpResponse) => string | undefined;
}

// One keep-alive-less agent: each try opens a new connection, as a fresh client would, so that a retry can land on a
// new listener or endpoint instead of a pooled connection to an old one.
const agent = new Agent({ pipelining: 0, connect: { timeout: 5_000 } });

export async function send(req: HttpRequest): Promise<HttpResponse> {
  const started = performance.now();
  const headers: Record<string, string> = { ...(req.headers ?? {}) };
  if (req.host) headers.host = req.host;
  const res = await undiciRequest(new URL(req.path ?? '/', req.url), {
    method: (req.method ?? 'GET') as any,
    headers,
    body: req.body,
    dispatcher: agent,
    headersTimeout: req.timeoutMs ?? 10_000,
    bodyTimeout: req.timeoutMs ?? 10_000,
  });
  const body = await res.body.text();
  const flat: Record<string, string> = {};
  for (const [k, v] of Object.entries(res.headers)) flat[k] = Array.isArray(v) ? v.join(', ') : String(v ?? '');
  let json: any;
  if ((flat['content-type'] ?? '').includes('json')) {
    try {
      json = JSON.parse(body);
    } catch {}
  }
  return { status: res.statusCode, headers: flat, body, json, ms: performance.now() - started };
}

/** Describes how a response misses the expectation, or returns undefined when it matches. */
export function mismatch(res: HttpResponse, exp: HttpExpectation): string | undefined {
  const statuses = exp.status === undefined ? [200] : Array.isArray(exp.status) ? exp.status : [exp.status];
  if (!statuses.includes(res.status))
    return `status ${res.status}, want ${statuses.join(' or ')} (body: ${res.body.slice(0, 200)})`;
  for (const [name, want] of Object.entries(exp.headers ?? {})) {
    const got = res.headers[name.toLowerCase()];
    if (want === null) {
      if (got !== undefined) return `header ${name} present (${got}), want absent`;
    } else if (got === undefined) {
      return `header ${name} absent`;
    } else if (want instanceof RegExp ? !want.test(got) : got !== want) {
      return `header ${name}: ${got}, want ${want}`;
    }
  }
  if (exp.body !== undefined) {
    const ok = exp.body instanceof RegExp ? exp.body.test(res.body) : res.body === exp.body;
    if (!ok) return `body ${JSON.stringify(res.body.slice(0, 200))}, want ${exp.body}`;
  }
  return exp.check?.(res);
}

export interface EventuallyOptions {
  timeoutMs?: number;
  intervalMs?: number;
  consecutive?: number;
}

/** Sends `req` until the expectation holds `consecutive` times in a row; returns the last response. */
export async function expectHttpEventually(
  req: HttpRequest,
  exp: HttpExpectation = {},
  opts: EventuallyOptions = {},
): Promise<HttpResponse> {
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const need = opts.consecutive ?? 3;
  const deadline = performance.now() + timeoutMs;
  let streak = 0;
  let last: string | undefined;
  for (;;) {
    try {
      const res = await send(req);
      const miss = mismatch(res, exp);
      if (!miss) {
        if (++streak >= need) return res;
      } else {
        streak = 0;
        last = miss;
      }
    } catch (err) {
      streak = 0;
      last = (err as Error).message;
    }
    if (performance.now() >= deadline) {
      throw new WaitTimeout(
        `${req.method ?? 'GET'} ${req.url}${req.path ?? '/'} (Host: ${req.host ?? '-'}) to match`,
        timeoutMs,
        last,
      );
    }
    if (streak === 0) await sleep(opts.intervalMs ?? 100);
  }
}
