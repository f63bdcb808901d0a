// Reads from the Kubernetes API as the server sends them. client-node's typed lists keep only the fields its model
// knows, so a field newer than the library (or a status field of the embedded server) would silently vanish from a
// collection; these GETs keep every field, with the kubeconfig's TLS and credentials applied as client-node does.
import http from 'node:http';
import https from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';

export class ApiError extends Error {
  readonly code: number;
  constructor(code: number, path: string, body: string) {
    let message = body.slice(0, 300);
    try {
      message = JSON.parse(body).message ?? message;
    } catch {}
    super(`GET ${path} answered ${code}: ${message}`);
    this.code = code;
  }
}

const TIMEOUT_MS = 30_000;

export async function getJson<T = any>(kc: KubeConfig, path: string): Promise<T> {
  const server = kc.getCurrentCluster()?.server;
  if (!server) throw new Error(`the kubeconfig's current context (${kc.getCurrentContext()}) names no cluster server`);
  const url = new URL(server.replace(/\/+$/, '') + path);
  const opts: https.RequestOptions = { method: 'GET', headers: { accept: 'application/json' } };
  await kc.applyToHTTPSOptions(opts);
  // Named, so an audit log tells the debug tools' reads apart from everything else.
  opts.headers = { ...(opts.headers ?? {}), accept: 'application/json', 'user-agent': 'gwlab-collect' };
  const mod = url.protocol === 'http:' ? http : https;
  // client-node's agent is an https one; a plain-http server (a local proxy) takes the default agent.
  if (url.protocol === 'http:') delete opts.agent;
  const body = await new Promise<{ status: number; text: string }>((resolve, reject) => {
    const req = mod.request(url, { ...opts, timeout: TIMEOUT_MS }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`GET ${path}: no answer within ${TIMEOUT_MS / 1000} s`)));
    req.on('error', reject);
    req.end();
  });
  if (body.status < 200 || body.status > 299) throw new ApiError(body.status, path, body.text);
  return JSON.parse(body.text) as T;
}

/** Every item of a list, following `continue` so a large list comes in pages. */
export async function listAll(kc: KubeConfig, path: string): Promise<any[]> {
  const items: any[] = [];
  let cont: string | undefined;
  do {
    const q = new URLSearchParams({ limit: '500' });
    if (cont) q.set('continue', cont);
    const page = await getJson<{ items?: any[]; metadata?: { continue?: string } }>(kc, `${path}?${q}`);
    items.push(...(page.items ?? []));
    cont = page.metadata?.continue || undefined;
  } while (cont);
  return items;
}

/** `/api/v1` or `/apis/<group>/<version>`. */
export function groupVersionPath(apiVersion: string): string {
  return apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
}
