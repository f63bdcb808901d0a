// What every resource handler is given (k8s.io/apiserver's endpoints/handlers RequestScope): the request as parsed,
// authenticated and authorized by server.ts, the resource type it names, the verbs (core.ts) and the way out: a
// response is queued for the end of the event-loop turn, after the store's commit and the request log's write.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../../../../system/shared/log.ts';
import type { Authenticator, UserInfo } from '../authn.ts';
import type { Core } from '../core.ts';
import type { Negotiated, RequestInfo } from '../request-info.ts';
import type { AuditRecord } from '../request-log.ts';
import type { ResourceType } from '../resources.ts';
import type { K8sObject } from '../store.ts';
import type { Column } from '../tables.ts';
import { sendJson } from './response.ts';

export interface ServerConfig {
  maxBodyBytes: number;
  keepAliveMs: number;
  bookmarkMs: number;
  auditLog?: string;
  log: Logger;
  serverAddress: () => string;
  /** kube-apiserver's --service-account-max-token-expiration: TokenRequests asking for longer get this (seconds). */
  serviceAccountMaxTokenExpirationSeconds?: number;
}

/** Rows and columns of `kubectl get` (handlers/read.ts builds it; get, list and Table watches use it). */
export interface TableRenderer {
  columns(rt: ResourceType): Column[];
  row(rt: ResourceType, obj: K8sObject, includeObject: string): unknown;
}

export interface RequestScope {
  core: Core;
  authn: Authenticator;
  cfg: ServerConfig;
  req: IncomingMessage;
  res: ServerResponse;
  user: UserInfo;
  info: RequestInfo;
  q: URLSearchParams;
  body: Buffer;
  /** The request log's record of this request (code, name, dryRun are filled in by the handler). */
  rec: AuditRecord;
  rt: ResourceType;
  /** The namespace for a namespaced resource, else undefined. */
  ns: string | undefined;
  /** The request body's content type. */
  contentType: string;
  neg: Negotiated;
  tables: TableRenderer;
  /** The server's open watches (ended on stop). */
  activeWatches: Set<() => void>;
  /** Queues a response for the end of the turn; `failIfUncommitted` gets a 500 instead if the commit fails. */
  send(fn: () => void, failIfUncommitted?: ServerResponse): void;
  /** Writes the request's log line (twice for long-running requests: stage ResponseStarted, then at the end). */
  finishAudit(stage?: 'ResponseStarted'): void;
}

const WRITE_VERBS = ['create', 'update', 'patch', 'delete', 'deletecollection'];

/**
 * Answers with `obj` as JSON and `warnings` as Warning headers. A write is answered only once it is committed (a
 * failed commit turns it into a 500). Returns false: the response is not a stream.
 */
export function respond(s: RequestScope, code: number, obj: unknown, warnings: string[] = []): false {
  s.rec.code = code;
  const headers: Record<string, string | string[]> = {};
  if (warnings.length) headers.Warning = warnings.map((w) => `299 - ${JSON.stringify(w)}`);
  const write = WRITE_VERBS.includes(s.rec.verb ?? '') && !s.rec.dryRun;
  s.send(() => sendJson(s.res, code, s.core.store.json(obj as object), headers), write ? s.res : undefined);
  return false;
}
