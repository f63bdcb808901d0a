// Writing responses, as k8s.io/apiserver's endpoints/handlers/responsewriters does: objects as JSON, lists written
// item by item, errors as Kubernetes Status objects with the headers their codes need; and reading request bodies
// within the size limit (413 past it).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../../../../system/shared/log.ts';
import { ApiError, errors } from '../errors.ts';
import { gv, type ResourceType } from '../resources.ts';
import type { K8sObject } from '../store.ts';

export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const len = Number(req.headers['content-length'] ?? 0);
    if (len > limit) {
      reject(errors.tooLarge(limit));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let failed = false;
    req.on('data', (c: Buffer) => {
      if (failed) return;
      size += c.length;
      if (size > limit) {
        failed = true;
        reject(errors.tooLarge(limit));
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => {
      if (!failed) resolve(Buffer.concat(chunks));
    });
    req.on('error', (e) => {
      if (!failed) reject(e);
    });
  });
}

/** Sends `obj` as JSON (a string is taken to be JSON already; bytes are sent as they are, e.g. protobuf). */
export function sendJson(
  res: ServerResponse,
  code: number,
  obj: unknown,
  headers: Record<string, string | string[]> = {},
): void {
  const body = typeof obj === 'string' || obj instanceof Uint8Array ? obj : JSON.stringify(obj);
  res.writeHead(code, {
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(body),
    ...headers,
  });
  res.end(body);
}

/** Lists are written in pieces: one JSON.stringify per item, no giant intermediate string. */
export function sendList(
  res: ServerResponse,
  rt: ResourceType,
  meta: Record<string, unknown>,
  items: K8sObject[],
  json: (o: K8sObject) => string,
): void {
  res.writeHead(200, { 'Content-Type': 'application/json' });
  const head = `{"kind":"${rt.listKind}","apiVersion":"${gv(rt)}","metadata":${JSON.stringify(meta)},"items":[`;
  const parts: string[] = [head];
  let size = head.length;
  for (let i = 0; i < items.length; i++) {
    const s = (i ? ',' : '') + json(items[i]);
    parts.push(s);
    size += s.length;
    if (size > 256 * 1024) {
      res.write(parts.join(''));
      parts.length = 0;
      size = 0;
    }
  }
  parts.push(']}');
  res.end(parts.join(''));
}

export function sendStatus(res: ServerResponse, err: ApiError): void {
  const headers: Record<string, string> = { ...(err.headers ?? {}) };
  if (err.code === 401) headers['WWW-Authenticate'] = 'Bearer realm="kubernetes-api"';
  if (err.code === 413) headers.Connection = 'close';
  sendJson(res, err.code, err.toStatus(), headers);
}

export function toApiError(e: unknown, log: Logger): ApiError {
  if (e instanceof ApiError) return e;
  log.error('internal error', { err: e as Error, stack: e instanceof Error ? e.stack : undefined });
  return errors.internal(e);
}
