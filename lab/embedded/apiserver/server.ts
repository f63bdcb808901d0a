// The HTTP layer, in the order of kube-apiserver's handler chain: the request log (request-log.ts), authentication,
// RequestInfo and content negotiation (request-info.ts), RBAC, body limits, then dispatch by verb family to the
// handlers (handlers/: read, write, patch, watch, subresources, non-resource; the verbs themselves are core.ts).
// Responses go out at the end of the event-loop turn, after the store's group commit and the request log's write.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { type Authenticator, isPrivileged, type UserInfo } from './authn.ts';
import { rawStatusResponse } from './connection.ts';
import type { Core } from './core.ts';
import type { SubresourceInfo } from './discovery.ts';
import { errors } from './errors.ts';
import { NonResourcePaths } from './handlers/non-resource.ts';
import { patch } from './handlers/patch.ts';
import { getObject, listObjects, tableRenderer } from './handlers/read.ts';
import { readBody, sendJson, sendStatus, toApiError } from './handlers/response.ts';
import type { RequestScope, ServerConfig, TableRenderer } from './handlers/scope.ts';
import { type SubresourceHandler, subresource } from './handlers/subresources.ts';
import { watch } from './handlers/watch.ts';
import { create, remove, update } from './handlers/write.ts';
import type { Authorizer } from './rbac.ts';
import { negotiate, parseRequestInfo, type RequestInfo } from './request-info.ts';
import { type AuditRecord, RequestLog } from './request-log.ts';
import type { ResourceType } from './resources.ts';
import { reviewFor } from './reviews.ts';
import type { K8sObject } from './store.ts';

const SUBRESOURCE_KINDS: Record<string, string> = {
  log: 'Pod',
  exec: 'PodExecOptions',
  attach: 'PodAttachOptions',
  portforward: 'PodPortForwardOptions',
  proxy: 'PodProxyOptions',
};

export class HttpApi {
  private readonly core: Core;
  private readonly authn: Authenticator;
  private readonly authz: Authorizer;
  private readonly cfg: ServerConfig;
  private readonly subresources = new Map<string, SubresourceHandler>();
  private readonly subresourceInfo: SubresourceInfo[] = [];
  private readonly requestLog: RequestLog;
  private readonly nonResources: NonResourcePaths;
  private readonly tables: TableRenderer;
  readonly activeWatches = new Set<() => void>();
  /** Upgraded connections (exec, attach, port-forward): the HTTP server no longer tracks them, so stop() does. */
  private readonly upgraded = new Set<Duplex>();
  /** Responses of this turn; `res` is set for writes, which fail with 500 when the commit fails. */
  private outbox: { fn: () => void; res?: ServerResponse }[] = [];
  private flushScheduled = false;

  constructor(core: Core, authn: Authenticator, authz: Authorizer, cfg: ServerConfig) {
    this.core = core;
    this.authn = authn;
    this.authz = authz;
    this.cfg = cfg;
    this.requestLog = new RequestLog(cfg.auditLog);
    this.nonResources = new NonResourcePaths(core, cfg.serverAddress, this.subresourceInfo);
    this.tables = tableRenderer((rt, obj) => core.present(rt, obj));
  }

  close(): void {
    for (const end of [...this.activeWatches]) end();
    for (const s of this.upgraded) s.destroy();
    this.upgraded.clear();
    this.flush();
    this.requestLog.close();
  }

  registerSubresource(resource: string, subresource: string, handler: SubresourceHandler): void {
    this.subresources.set(`${resource}/${subresource}`, handler);
    if (!this.subresourceInfo.some((s) => s.resource === resource && s.subresource === subresource))
      this.subresourceInfo.push({
        resource,
        subresource,
        kind: { group: '', version: 'v1', kind: SUBRESOURCE_KINDS[subresource] ?? 'Status' },
        verbs: subresource === 'log' ? ['get'] : ['create', 'get'],
      });
  }

  private audit(rec: AuditRecord, started: number, method: string, uri: string, ua: string | undefined): void {
    if (this.requestLog.record(rec, started, method, uri, ua)) this.scheduleFlush();
  }

  /**
   * Responses go out at the end of the event-loop turn, after the store's group commit and one write of the
   * request-log lines: a client never sees a write acknowledged before it is durable, nor a response before its line
   * is in the request log.
   */
  private send(fn: () => void, failIfUncommitted?: ServerResponse): void {
    this.outbox.push({ fn, res: failIfUncommitted });
    this.scheduleFlush();
  }

  private scheduleFlush(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(() => this.flush());
  }

  private flush(): void {
    this.flushScheduled = false;
    let commitError: unknown;
    try {
      this.core.store.commit();
    } catch (e) {
      commitError = e;
      this.cfg.log.error('storage commit failed: writes of this turn are not acknowledged', { err: e as Error });
    }
    this.requestLog.write(this.cfg.log);
    const out = this.outbox;
    this.outbox = [];
    for (const { fn, res } of out) {
      try {
        if (commitError && res) sendStatus(res, errors.internal(`storage commit failed: ${String(commitError)}`));
        else fn();
      } catch (e) {
        this.cfg.log.error('response failed', { err: e as Error });
      }
    }
  }

  // ---- entry points ----

  async onRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const started = performance.now();
    const rec: AuditRecord = {};
    const uri = req.url ?? '/';
    let streaming = false;
    const finishAudit = (stage?: 'ResponseStarted') =>
      this.audit(stage ? { ...rec, stage } : rec, started, req.method ?? 'GET', uri, req.headers['user-agent']);
    try {
      const url = new URL(uri, 'https://apiserver');
      const path = url.pathname;
      if (req.method === 'GET' && ['/healthz', '/livez', '/readyz'].includes(path.replace(/\/$/, ''))) {
        rec.code = 200;
        finishAudit();
        this.send(() => res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' }).end('ok'));
        return;
      }
      const user = this.authn.authenticate(req.headers.authorization);
      if (!user) throw errors.unauthorized();
      rec.user = user.username;
      const info = parseRequestInfo(req.method ?? 'GET', path, url.searchParams);
      rec.verb = info.verb;
      if (!info.resourceRequest) {
        if (!isPrivileged(user)) this.authz.authorize(user, { verb: 'get', path });
        const r = this.nonResources.body(req, path, url.searchParams);
        rec.code = 200;
        this.send(() => sendJson(res, 200, r.body, r.headers ?? {}));
        finishAudit();
        return;
      }
      Object.assign(rec, {
        group: info.group,
        resource: info.resource,
        subresource: info.subresource,
        namespace: info.namespace,
        name: info.name,
      });
      const body = await readBody(req, this.cfg.maxBodyBytes);
      streaming = await this.resource(req, res, user, info, url.searchParams, body, rec, finishAudit);
      if (!streaming) finishAudit();
    } catch (e) {
      const err = toApiError(e, this.cfg.log);
      rec.code = err.code;
      finishAudit();
      if (!res.headersSent) this.send(() => sendStatus(res, err));
      else res.destroy();
      if (err.code === 413) req.resume();
    }
  }

  async onUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const started = performance.now();
    const rec: AuditRecord = {};
    const uri = req.url ?? '/';
    let audited = false;
    const finishAudit = () => {
      if (audited) return;
      audited = true;
      this.audit(rec, started, req.method ?? 'GET', uri, req.headers['user-agent']);
    };
    socket.on('error', () => {});
    this.upgraded.add(socket);
    socket.once('close', () => this.upgraded.delete(socket));
    try {
      const url = new URL(uri, 'https://apiserver');
      const user = this.authn.authenticate(req.headers.authorization);
      if (!user) throw errors.unauthorized();
      rec.user = user.username;
      const info = parseRequestInfo(req.method ?? 'GET', url.pathname, url.searchParams);
      if (!info.resourceRequest || !info.resource || !info.name || !info.subresource) throw errors.noResource();
      // Streaming subresources need `create` whatever the method (Kubernetes 1.32 checks create for WebSocket GETs).
      info.verb = 'create';
      Object.assign(rec, {
        verb: info.verb,
        group: info.group,
        resource: info.resource,
        subresource: info.subresource,
        namespace: info.namespace,
        name: info.name,
      });
      const { handler, rt, object } = this.subresourceTarget(user, info);
      rec.code = 101;
      this.audit({ ...rec, stage: 'ResponseStarted' }, started, req.method ?? 'GET', uri, req.headers['user-agent']);
      socket.once('close', finishAudit);
      await handler({
        user,
        verb: info.verb,
        namespace: info.namespace ?? '',
        name: info.name,
        resource: rt.plural,
        subresource: info.subresource,
        query: url.searchParams,
        req,
        upgrade: { socket, head },
        object,
      });
    } catch (e) {
      const err = toApiError(e, this.cfg.log);
      rec.code = err.code;
      finishAudit();
      if (socket.writable) socket.end(rawStatusResponse(err));
    }
  }

  private subresourceTarget(
    user: UserInfo,
    info: RequestInfo,
  ): { handler: SubresourceHandler; rt: ResourceType; object: K8sObject } {
    const rt = this.core.registry.get(info.group, info.version, info.resource!);
    if (!rt) throw errors.noResource();
    const handler = this.subresources.get(`${rt.plural}/${info.subresource!.split('/')[0]}`);
    if (!handler || !rt.builtin) throw errors.noResource();
    if (!isPrivileged(user))
      this.authz.authorize(user, {
        verb: info.verb,
        group: rt.group,
        resource: rt.plural,
        subresource: info.subresource!.split('/')[0],
        namespace: info.namespace,
        name: info.name,
      });
    const object = this.core.get(rt, info.namespace, info.name!);
    return { handler, rt, object };
  }

  /** Authorizes a resource request and hands it to its verb's handler; true when the response is a stream. */
  private async resource(
    req: IncomingMessage,
    res: ServerResponse,
    user: UserInfo,
    info: RequestInfo,
    q: URLSearchParams,
    body: Buffer,
    rec: AuditRecord,
    finishAudit: (stage?: 'ResponseStarted') => void,
  ): Promise<boolean> {
    const core = this.core;
    const review = reviewFor(this.authz, info.group, info.version, info.resource);
    if (review) {
      if (!isPrivileged(user))
        this.authz.authorize(user, { verb: info.verb, group: info.group, resource: info.resource });
      if (req.method !== 'POST') throw errors.methodNotAllowed();
      rec.code = 201;
      const out = review(user, core.decode(body, String(req.headers['content-type'] ?? 'application/json')));
      this.send(() => sendJson(res, 201, out));
      return false;
    }
    const rt = core.registry.get(info.group, info.version, info.resource!);
    if (!rt) throw errors.noResource();
    if (!rt.namespaced && info.namespace && rt.plural !== 'namespaces') throw errors.noResource();
    if (info.watch && info.verb !== 'watch') info.verb = 'watch';
    const sub = info.subresource?.split('/')[0];
    if (!isPrivileged(user))
      this.authz.authorize(user, {
        verb: info.verb,
        group: rt.group,
        resource: rt.plural,
        subresource: sub,
        namespace: rt.namespaced || rt.plural === 'namespaces' ? info.namespace : undefined,
        name: info.name,
      });
    const neg = negotiate(req.headers.accept);
    if (!neg.json && !neg.as) throw errors.notAcceptable();
    const s: RequestScope = {
      core,
      authn: this.authn,
      cfg: this.cfg,
      req,
      res,
      user,
      info,
      q,
      body,
      rec,
      rt,
      ns: rt.namespaced ? info.namespace : undefined,
      contentType: String(req.headers['content-type'] ?? 'application/json'),
      neg,
      tables: this.tables,
      activeWatches: this.activeWatches,
      send: (fn, failIfUncommitted) => this.send(fn, failIfUncommitted),
      finishAudit,
    };
    if (sub) return subresource(s, sub, this.subresources);
    switch (req.method ?? 'GET') {
      case 'GET':
      case 'HEAD':
        if (info.watch) return watch(s);
        return info.name ? getObject(s, info.name) : listObjects(s);
      case 'POST':
        return create(s);
      case 'PUT':
        return update(s);
      case 'PATCH':
        return patch(s);
      case 'DELETE':
        return remove(s);
      default:
        throw errors.methodNotAllowed();
    }
  }
}
