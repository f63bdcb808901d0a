// Reads from the Kubernetes API as the server sends them. client-node's typed lists keep only the fields its model
// knows, so a field newer than the library (or a status field of the embedded server) would silently vanish from a
// collection; these GETs keep every field, with the kubeconfig's TLS and credentials applied by client-node itself
// (applySecurityAuthentication: headers and dispatcher), over the kept-alive connections of a Kube's KubeConfig
// (system/controlplane/kube/transport.ts).
import { HttpMethod, type KubeConfig, RequestContext } from '@kubernetes/client-node';
import { request } from 'undici';

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
  const url = server.replace(/\/+$/, '') + path;
  const ctx = new RequestContext(url, HttpMethod.GET);
  await kc.applySecurityAuthentication(ctx);
  let body: { status: number; text: string };
  try {
    const res = await request(url, {
      method: 'GET',
      // Named, so an audit log tells the debug tools' reads apart from everything else.
      headers: { ...ctx.getHeaders(), accept: 'application/json', 'user-agent': 'gwlab-collect' },
      dispatcher: ctx.getDispatcher(),
      headersTimeout: TIMEOUT_MS,
      bodyTimeout: TIMEOUT_MS,
    });
    body = { status: res.statusCode, text: await res.body.text() };
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') {
      throw new Error(`GET ${path}: no answer within ${TIMEOUT_MS / 1000} s`);
    }
    throw err;
  }
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
