// Small helpers for the pod subresources served by the node agent (log, portforward, exec).
import type { ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { SubresourceRequest } from '../../apiserver/index.ts';

export function statusBody(code: number, reason: string, message: string): string {
  return JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code });
}

const TEXT: Record<number, string> = { 400: 'Bad Request', 404: 'Not Found', 500: 'Internal Server Error' };

/** Answers a plain request with a Kubernetes Status. */
export function sendStatus(res: ServerResponse, code: number, reason: string, message: string): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  const body = statusBody(code, reason, message);
  res.writeHead(code, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

/** The upgrade a streaming subresource needs (WebSocket, SPDY); a plain request is answered 400 and gets undefined. */
export function upgradeOf(r: SubresourceRequest): { socket: Duplex; head: Buffer } | undefined {
  if (r.upgrade) return { socket: r.upgrade.socket as Duplex, head: r.upgrade.head };
  r.res?.writeHead(400, { 'Content-Type': 'text/plain' });
  r.res?.end('Upgrade request required');
  return undefined;
}

/** Answers an upgrade request (before the 101) with a Kubernetes Status. */
export function rejectUpgrade(socket: Duplex, code: number, reason: string, message: string): void {
  const body = statusBody(code, reason, message);
  if (socket.writable) {
    socket.end(
      `HTTP/1.1 ${code} ${TEXT[code] ?? 'Error'}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
}

/** The pod's container names, for "choose one of" messages and defaults. */
export function podContainers(pod: any): string[] {
  return (pod.spec?.containers ?? []).map((c: any) => c.name);
}

/** The container a request means: `container` if given, the default-container annotation, or the only one. */
export function pickContainer(pod: any, requested: string | null): { name?: string; error?: string } {
  const names = podContainers(pod);
  const inits = (pod.spec?.initContainers ?? []).map((c: any) => c.name);
  if (requested) {
    if (names.includes(requested) || inits.includes(requested)) return { name: requested };
    return { error: `container ${requested} is not valid for pod ${pod.metadata.name}` };
  }
  const def = pod.metadata.annotations?.['kubectl.kubernetes.io/default-container'];
  if (def && names.includes(def)) return { name: def };
  if (names.length === 1) return { name: names[0] };
  return {
    error: `a container name must be specified for pod ${pod.metadata.name}, choose one of: [${names.join(' ')}]`,
  };
}
