// The HTTP layer: request parsing (Kubernetes' RequestInfo rules), authentication, RBAC, content negotiation (JSON,
// Table, PartialObjectMetadata, aggregated discovery), body limits, the request log, and dispatch to the verbs (core.ts),
// watches (watch.ts), built-in subresources and the subresources other modules register (pods/log, exec, portforward).
import { closeSync, fstatSync, mkdirSync, openSync, renameSync, writeSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { dirname } from 'node:path';
import type { Duplex } from 'node:stream';
import type { Logger } from '../../../system/shared/log.ts';
import { type Authenticator, isPrivileged, type UserInfo } from './authn.ts';
import { rawStatusResponse } from './connection.ts';
import type { Core, DeleteOptions, FieldValidation, WriteOptions } from './core.ts';
import {
  aggregatedDiscovery,
  apiGroup,
  apiGroupList,
  apiResourceList,
  apiVersions,
  type SubresourceInfo,
  versionInfo,
} from './discovery.ts';
import { ApiError, errors } from './errors.ts';
import { serveWatch, type TableRenderer } from './handlers/watch.ts';
import { openapiIndex } from './openapi.ts';
import type { Authorizer } from './rbac.ts';
import { gv, type ResourceType } from './resources.ts';
import { reviewFor } from './reviews.ts';
import type { K8sObject } from './store.ts';

export interface SubresourceRequest {
  user: UserInfo;
  /** Kubernetes verb as authorized: get (GET), create (POST and every upgrade), ... */
  verb: string;
  namespace: string;
  name: string;
  resource: string;
  subresource: string;
  query: URLSearchParams;
  req: IncomingMessage;
  /** Plain HTTP requests. */
  res?: ServerResponse;
  /** HTTP upgrade requests (WebSocket, SPDY): the raw socket and the bytes read past the headers. */
  upgrade?: { socket: Duplex; head: Buffer };
  /** The parent object (e.g. the Pod), as stored when the request arrived. */
  object: K8sObject;
}
export type SubresourceHandler = (r: SubresourceRequest) => void | Promise<void>;

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

interface RequestInfo {
  resourceRequest: boolean;
  verb: string;
  group: string;
  version: string;
  namespace?: string;
  resource?: string;
  name?: string;
  subresource?: string;
  watch: boolean;
}

interface AuditRecord {
  user?: string;
  verb?: string;
  group?: string;
  resource?: string;
  subresource?: string;
  namespace?: string;
  name?: string;
  code?: number;
  dryRun?: boolean;
  /** Long-running requests (watches, streams) log twice: when the response starts and when it completes. */
  stage?: 'ResponseStarted' | 'ResponseComplete';
}

const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);
const AUDIT_MAX_BYTES = 64 * 1024 * 1024;

export function parseRequestInfo(method: string, path: string, query: URLSearchParams): RequestInfo {
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  const info: RequestInfo = {
    resourceRequest: false,
    verb: method.toLowerCase(),
    group: '',
    version: '',
    watch: false,
  };
  let rest: string[];
  if (parts[0] === 'api' && parts.length >= 3) {
    info.version = parts[1];
    rest = parts.slice(2);
  } else if (parts[0] === 'apis' && parts.length >= 4) {
    info.group = parts[1];
    info.version = parts[2];
    rest = parts.slice(3);
  } else return info;
  info.resourceRequest = true;
  if (rest[0] === 'watch') {
    info.watch = true;
    rest = rest.slice(1);
  }
  if (rest[0] === 'namespaces' && rest.length >= 2) {
    info.namespace = rest[1];
    if (rest.length > 2 && !NAMESPACE_SUBRESOURCES.has(rest[2])) rest = rest.slice(2);
  }
  info.resource = rest[0];
  info.name = rest[1];
  info.subresource = rest.length > 2 ? rest.slice(2).join('/') : undefined;
  if (info.resource === 'namespaces' && info.name) info.namespace = info.name;
  if (query.get('watch') === 'true' || query.get('watch') === '1') info.watch = true;
  switch (method) {
    case 'GET':
    case 'HEAD':
      info.verb = info.name && !info.watch ? 'get' : info.watch ? 'watch' : info.name ? 'get' : 'list';
      if (info.watch && info.name) info.verb = 'watch';
      break;
    case 'POST':
      info.verb = 'create';
      break;
    case 'PUT':
      info.verb = 'update';
      break;
    case 'PATCH':
      info.verb = 'patch';
      break;
    case 'DELETE':
      info.verb = info.name ? 'delete' : 'deletecollection';
      break;
  }
  return info;
}

/** What the client accepts, in its order of preference. */
function negotiate(accept: string | undefined): {
  as?: 'Table' | 'PartialObjectMetadata' | 'PartialObjectMetadataList' | 'APIGroupDiscoveryList';
  discoveryVersion?: 'v2' | 'v2beta1';
  json: boolean;
} {
  if (!accept) return { json: true };
  let json = false;
  for (const raw of accept.split(',')) {
    const [type, ...params] = raw.split(';').map((s) => s.trim());
    const p = Object.fromEntries(params.map((x) => x.split('=').map((s) => s.trim())));
    const t = type.toLowerCase();
    if (t !== 'application/json' && t !== '*/*' && t !== 'application/*' && t !== 'application/yaml') continue;
    if (p.as === 'Table' && p.g === 'meta.k8s.io') return { as: 'Table', json: true };
    if ((p.as === 'PartialObjectMetadata' || p.as === 'PartialObjectMetadataList') && p.g === 'meta.k8s.io')
      return { as: p.as, json: true };
    if (p.as === 'APIGroupDiscoveryList' && p.g === 'apidiscovery.k8s.io' && (p.v === 'v2' || p.v === 'v2beta1'))
      return { as: 'APIGroupDiscoveryList', discoveryVersion: p.v, json: true };
    if (!p.as) {
      json = true;
      break;
    }
  }
  return { json };
}

export class HttpApi {
  private readonly core: Core;
  private readonly authn: Authenticator;
  private readonly authz: Authorizer;
  private readonly cfg: ServerConfig;
  private readonly subresources = new Map<string, SubresourceHandler>();
  private readonly subresourceInfo: SubresourceInfo[] = [];
  private auditFd?: number;
  private auditWrites = 0;
  readonly activeWatches = new Set<() => void>();
  /** Upgraded connections (exec, attach, port-forward): the HTTP server no longer tracks them, so stop() does. */
  private readonly upgraded = new Set<Duplex>();
  private openapiCache?: { key: string; value: ReturnType<typeof openapiIndex> };
  private auditBuf: string[] = [];
  /** Responses of this turn; `res` is set for writes, which fail with 500 when the commit fails. */
  private outbox: { fn: () => void; res?: ServerResponse }[] = [];
  private flushScheduled = false;

  constructor(core: Core, authn: Authenticator, authz: Authorizer, cfg: ServerConfig) {
    this.core = core;
    this.authn = authn;
    this.authz = authz;
    this.cfg = cfg;
    if (cfg.auditLog) {
      mkdirSync(dirname(cfg.auditLog), { recursive: true });
      this.auditFd = openSync(cfg.auditLog, 'a');
    }
  }

  close(): void {
    for (const end of [...this.activeWatches]) end();
    for (const s of this.upgraded) s.destroy();
    this.upgraded.clear();
    this.flush();
    if (this.auditFd !== undefined) closeSync(this.auditFd);
    this.auditFd = undefined;
  }

  registerSubresource(resource: string, subresource: string, handler: SubresourceHandler): void {
    this.subresources.set(`${resource}/${subresource}`, handler);
    const kinds: Record<string, string> = {
      log: 'Pod',
      exec: 'PodExecOptions',
      attach: 'PodAttachOptions',
      portforward: 'PodPortForwardOptions',
      proxy: 'PodProxyOptions',
    };
    if (!this.subresourceInfo.some((s) => s.resource === resource && s.subresource === subresource))
      this.subresourceInfo.push({
        resource,
        subresource,
        kind: { group: '', version: 'v1', kind: kinds[subresource] ?? 'Status' },
        verbs: subresource === 'log' ? ['get'] : ['create', 'get'],
      });
  }

  private audit(rec: AuditRecord, started: number, method: string, uri: string, ua: string | undefined): void {
    if (this.auditFd === undefined) return;
    const line = {
      ts: new Date().toISOString(),
      user: rec.user ?? '',
      verb: rec.verb ?? method.toLowerCase(),
      apiGroup: rec.group ?? '',
      resource: rec.resource ?? '',
      ...(rec.subresource ? { subresource: rec.subresource } : {}),
      namespace: rec.namespace ?? '',
      name: rec.name ?? '',
      code: rec.code ?? 0,
      stage: rec.stage ?? 'ResponseComplete',
      durationMs: Math.round((performance.now() - started) * 100) / 100,
      method,
      uri,
      ...(rec.dryRun ? { dryRun: true } : {}),
      ...(ua ? { userAgent: ua } : {}),
    };
    this.auditBuf.push(`${JSON.stringify(line)}\n`);
    this.scheduleFlush();
  }

  /** Past AUDIT_MAX_BYTES the request log moves to `<file>.1` (replacing the previous one) and starts afresh. */
  private rotateAudit(): void {
    if (++this.auditWrites % 1000 !== 0 || this.auditFd === undefined || !this.cfg.auditLog) return;
    if (fstatSync(this.auditFd).size < AUDIT_MAX_BYTES) return;
    closeSync(this.auditFd);
    renameSync(this.cfg.auditLog, `${this.cfg.auditLog}.1`);
    this.auditFd = openSync(this.cfg.auditLog, 'a');
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
    if (this.auditBuf.length && this.auditFd !== undefined) {
      try {
        this.rotateAudit();
        writeSync(this.auditFd, this.auditBuf.join(''));
      } catch (e) {
        this.cfg.log.error('request log write failed', { err: e as Error });
      }
    }
    this.auditBuf = [];
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
        this.nonResource(req, res, path, url.searchParams, rec);
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

  // ---- non-resource paths ----

  private nonResource(
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    q: URLSearchParams,
    rec: AuditRecord,
  ): void {
    const r = this.nonResourceBody(req, path, q);
    rec.code = 200;
    this.send(() => sendJson(res, 200, r.body, r.headers ?? {}));
  }

  private nonResourceBody(
    req: IncomingMessage,
    path: string,
    q: URLSearchParams,
  ): { body: unknown; headers?: Record<string, string> } {
    const neg = negotiate(req.headers.accept);
    const p = path.replace(/\/+$/, '') || '/';
    const reg = this.core.registry;
    if (p === '/version') return { body: versionInfo() };
    if (p === '/api' || p === '/apis') {
      if (neg.as === 'APIGroupDiscoveryList') {
        const v = neg.discoveryVersion!;
        return {
          body: aggregatedDiscovery(reg, p === '/api', v, this.subresourceInfo),
          headers: { 'Content-Type': `application/json;g=apidiscovery.k8s.io;v=${v};as=APIGroupDiscoveryList` },
        };
      }
      return { body: p === '/api' ? apiVersions(this.cfg.serverAddress()) : apiGroupList(reg) };
    }
    if (p === '/api/v1')
      return {
        body: apiResourceList(
          reg.all().filter((r) => !r.group),
          'v1',
          this.subresourceInfo,
        ),
      };
    let m = /^\/apis\/([^/]+)$/.exec(p);
    if (m) {
      const name = m[1];
      const g = reg.groups().find((x) => x.name === name);
      if (!g) throw errors.noResource();
      return { body: apiGroup(g.name, g.versions) };
    }
    m = /^\/apis\/([^/]+)\/([^/]+)$/.exec(p);
    if (m) {
      const [, group, version] = m;
      const rts = reg.all().filter((r) => r.group === group && r.version === version);
      if (!rts.length) throw errors.noResource();
      return { body: apiResourceList(rts, `${group}/${version}`, this.subresourceInfo) };
    }
    if (p === '/openapi/v3' || p.startsWith('/openapi/v3/')) {
      const oa = this.openapi();
      if (p === '/openapi/v3') return { body: oa.index };
      const doc = oa.docs.get(p.slice('/openapi/v3/'.length));
      if (!doc) throw errors.noResource();
      return { body: doc, headers: q.has('hash') ? { 'Cache-Control': 'public, immutable' } : {} };
    }
    throw errors.noResource();
  }

  private openapi() {
    const key = this.core.registry
      .all()
      .map(
        (r) =>
          `${r.group}/${r.version}/${r.plural}/${r.crd?.uid ?? ''}:${this.core.store.get('apiextensions.k8s.io/customresourcedefinitions', `${r.plural}.${r.group}`)?.metadata.resourceVersion ?? ''}`,
      )
      .join(',');
    if (this.openapiCache?.key !== key) this.openapiCache = { key, value: openapiIndex(this.core.registry) };
    return this.openapiCache.value;
  }

  // ---- resources ----

  private tables: TableRenderer = {
    columns: (rt) => rt.table.columns,
    row: (rt, obj, includeObject) => {
      const row: Record<string, unknown> = { cells: rt.table.cells(obj, Date.now()) };
      if (includeObject === 'Object') row.object = this.core.present(rt, obj);
      else if (includeObject !== 'None')
        row.object = { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: obj.metadata };
      return row;
    },
  };

  private table(rt: ResourceType, items: K8sObject[], q: URLSearchParams, meta: Record<string, unknown>) {
    const includeObject = q.get('includeObject') ?? 'Metadata';
    return {
      kind: 'Table',
      apiVersion: 'meta.k8s.io/v1',
      metadata: meta,
      columnDefinitions: this.tables.columns(rt),
      rows: items.map((o) => this.tables.row(rt, o, includeObject)),
    };
  }

  private writeOptions(req: IncomingMessage, q: URLSearchParams, user: UserInfo): WriteOptions {
    const dryRun = q.getAll('dryRun');
    if (dryRun.some((d) => d !== 'All'))
      throw errors.badRequest(
        `dryRun: Unsupported value: "${dryRun.find((d) => d !== 'All')}": supported values: "All"`,
      );
    const fv = q.get('fieldValidation') ?? 'Warn';
    const norm = { strict: 'Strict', warn: 'Warn', ignore: 'Ignore' }[fv.toLowerCase()] as FieldValidation | undefined;
    if (!norm)
      throw errors.badRequest(
        `fieldValidation: Unsupported value: "${fv}": supported values: "Ignore", "Strict", "Warn"`,
      );
    const ua = String(req.headers['user-agent'] ?? 'unknown');
    return {
      dryRun: dryRun.length > 0,
      fieldManager: q.get('fieldManager') ?? undefined,
      fieldValidation: norm,
      warnings: [],
      defaultManager: ua.split('/')[0].slice(0, 128) || 'unknown',
      user,
    };
  }

  /** Returns true when the response is a stream that logs itself when it ends. */
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
    const ns = rt.namespaced ? info.namespace : undefined;
    const ct = String(req.headers['content-type'] ?? 'application/json');
    const method = req.method ?? 'GET';

    if (sub) {
      if (sub === 'status' && rt.status) {
        if (method === 'GET') return this.ok(res, rec, 200, core.get(rt, ns, info.name!));
        const wo = this.writeOptions(req, q, user);
        rec.dryRun = wo.dryRun;
        if (method === 'PUT')
          return this.ok(
            res,
            rec,
            200,
            core.update(rt, ns, info.name!, core.decode(body, ct), wo, 'status'),
            wo.warnings,
          );
        if (method === 'PATCH') {
          const r = core.patch(rt, ns, info.name!, ct, body, { ...wo, force: boolParam(q, 'force') }, 'status');
          return this.ok(res, rec, 200, r.obj, wo.warnings);
        }
        throw errors.methodNotAllowed();
      }
      if (sub === 'scale' && rt.scale) {
        if (method === 'GET') return this.ok(res, rec, 200, core.getScale(rt, ns, info.name!));
        const wo = this.writeOptions(req, q, user);
        rec.dryRun = wo.dryRun;
        if (method === 'PUT')
          return this.ok(res, rec, 200, core.updateScale(rt, ns, info.name!, core.decode(body, ct), wo));
        if (method === 'PATCH') return this.ok(res, rec, 200, core.patchScale(rt, ns, info.name!, ct, body, wo));
        throw errors.methodNotAllowed();
      }
      if (sub === 'finalize' && rt.builtin && rt.plural === 'namespaces') {
        if (method !== 'PUT') throw errors.methodNotAllowed();
        const wo = this.writeOptions(req, q, user);
        return this.ok(res, rec, 200, core.update(rt, undefined, info.name!, core.decode(body, ct), wo, 'finalize'));
      }
      if (sub === 'token' && rt.builtin && rt.plural === 'serviceaccounts') {
        if (method !== 'POST') throw errors.methodNotAllowed();
        const warnings: string[] = [];
        return this.ok(res, rec, 201, this.tokenRequest(ns!, info.name!, core.decode(body, ct), warnings), warnings);
      }
      const handler = this.subresources.get(`${rt.plural}/${sub}`);
      if (handler && rt.builtin) {
        const object = core.get(rt, ns, info.name!);
        rec.code = 200;
        finishAudit('ResponseStarted');
        res.on('close', () => {
          rec.code = res.statusCode;
          finishAudit();
        });
        await handler({
          user,
          verb: info.verb,
          namespace: ns ?? '',
          name: info.name!,
          resource: rt.plural,
          subresource: info.subresource!,
          query: q,
          req,
          res,
          object,
        });
        return true;
      }
      throw errors.noResource();
    }

    switch (method) {
      case 'GET':
      case 'HEAD': {
        if (info.watch) {
          rec.code = 200;
          const lo = {
            namespace: ns,
            name: info.name,
            resourceVersion: q.get('resourceVersion'),
            labelSelector: q.get('labelSelector'),
            fieldSelector: q.get('fieldSelector'),
            allowBookmarks: boolParam(q, 'allowWatchBookmarks'),
            sendInitialEvents: q.has('sendInitialEvents') ? boolParam(q, 'sendInitialEvents') : undefined,
            timeoutSeconds: q.has('timeoutSeconds') ? Number(q.get('timeoutSeconds')) : undefined,
            as:
              neg.as === 'Table'
                ? ('Table' as const)
                : neg.as?.startsWith('Partial')
                  ? ('PartialObjectMetadata' as const)
                  : undefined,
            includeObject: q.get('includeObject') ?? undefined,
            keepAliveMs: this.cfg.keepAliveMs,
            bookmarkMs: this.cfg.bookmarkMs,
            onEnd: () => finishAudit(),
            active: this.activeWatches,
          };
          finishAudit('ResponseStarted');
          serveWatch(core, rt, res, lo, this.tables);
          return true;
        }
        if (info.name) {
          const obj = core.get(rt, ns, info.name);
          if (neg.as === 'Table')
            return this.ok(res, rec, 200, this.table(rt, [obj], q, { resourceVersion: obj.metadata.resourceVersion }));
          if (neg.as === 'PartialObjectMetadata')
            return this.ok(res, rec, 200, {
              kind: 'PartialObjectMetadata',
              apiVersion: 'meta.k8s.io/v1',
              metadata: obj.metadata,
            });
          return this.ok(res, rec, 200, obj);
        }
        const limit = q.has('limit') ? Number(q.get('limit')) : undefined;
        const l = core.list(rt, ns, {
          labelSelector: q.get('labelSelector'),
          fieldSelector: q.get('fieldSelector'),
          limit,
          continue: q.get('continue'),
        });
        const meta: Record<string, unknown> = { resourceVersion: String(l.rv) };
        if (l.continue) meta.continue = l.continue;
        if (neg.as === 'Table') return this.ok(res, rec, 200, this.table(rt, l.items, q, meta));
        if (neg.as === 'PartialObjectMetadataList' || neg.as === 'PartialObjectMetadata')
          return this.ok(res, rec, 200, {
            kind: 'PartialObjectMetadataList',
            apiVersion: 'meta.k8s.io/v1',
            metadata: meta,
            items: l.items.map((o) => ({
              kind: 'PartialObjectMetadata',
              apiVersion: 'meta.k8s.io/v1',
              metadata: o.metadata,
            })),
          });
        rec.code = 200;
        this.send(() => sendList(res, rt, meta, l.items, (o) => core.store.json(o)));
        return false;
      }
      case 'POST': {
        if (info.name) throw errors.methodNotAllowed();
        const wo = this.writeOptions(req, q, user);
        rec.dryRun = wo.dryRun;
        const obj = core.create(rt, ns, core.decode(body, ct), wo);
        rec.name = obj.metadata.name;
        return this.ok(res, rec, 201, obj, wo.warnings);
      }
      case 'PUT': {
        if (!info.name) throw errors.methodNotAllowed();
        const wo = this.writeOptions(req, q, user);
        rec.dryRun = wo.dryRun;
        return this.ok(res, rec, 200, core.update(rt, ns, info.name, core.decode(body, ct), wo), wo.warnings);
      }
      case 'PATCH': {
        if (!info.name) throw errors.methodNotAllowed();
        const wo = this.writeOptions(req, q, user);
        rec.dryRun = wo.dryRun;
        const r = core.patch(rt, ns, info.name, ct, body, { ...wo, force: boolParam(q, 'force') });
        return this.ok(res, rec, r.created ? 201 : 200, r.obj, wo.warnings);
      }
      case 'DELETE': {
        const opts = this.deleteOptions(q, body);
        rec.dryRun = opts.dryRun;
        if (info.name) {
          const r = core.delete(rt, ns, info.name, opts);
          if (r.deleted && !(rt.builtin && rt.plural === 'pods')) {
            return this.ok(res, rec, 200, {
              kind: 'Status',
              apiVersion: 'v1',
              metadata: {},
              status: 'Success',
              details: { name: info.name, group: rt.group || undefined, kind: rt.plural, uid: r.obj.metadata.uid },
            });
          }
          return this.ok(res, rec, r.deleted ? 200 : opts.propagationPolicy === 'Foreground' ? 202 : 200, r.obj);
        }
        const items = core.deleteCollection(
          rt,
          ns,
          { labelSelector: q.get('labelSelector'), fieldSelector: q.get('fieldSelector') },
          opts,
        );
        return this.ok(res, rec, 200, {
          kind: rt.listKind,
          apiVersion: gv(rt),
          metadata: { resourceVersion: String(core.store.revision()) },
          items,
        });
      }
      default:
        throw errors.methodNotAllowed();
    }
  }

  private ok(res: ServerResponse, rec: AuditRecord, code: number, obj: unknown, warnings: string[] = []): false {
    rec.code = code;
    const headers: Record<string, string | string[]> = {};
    if (warnings.length) headers.Warning = warnings.map((w) => `299 - ${JSON.stringify(w)}`);
    const write = ['create', 'update', 'patch', 'delete', 'deletecollection'].includes(rec.verb ?? '') && !rec.dryRun;
    this.send(() => sendJson(res, code, this.core.store.json(obj as object), headers), write ? res : undefined);
    return false;
  }

  private deleteOptions(q: URLSearchParams, body: Buffer): DeleteOptions {
    let b: any = {};
    if (body.length) {
      try {
        b = JSON.parse(body.toString('utf8'));
      } catch {
        throw errors.badRequest('the body of the DELETE request could not be decoded as DeleteOptions JSON');
      }
      if (b === null || typeof b !== 'object') b = {};
    }
    const dryRun = [...q.getAll('dryRun'), ...(Array.isArray(b.dryRun) ? b.dryRun : [])];
    let policy = q.get('propagationPolicy') ?? b.propagationPolicy;
    const orphan = q.has('orphanDependents') ? q.get('orphanDependents') === 'true' : b.orphanDependents;
    if (policy === undefined && orphan !== undefined) policy = orphan ? 'Orphan' : 'Background';
    if (policy !== undefined && !['Orphan', 'Background', 'Foreground'].includes(policy))
      throw errors.badRequest(
        `propagationPolicy: Unsupported value: "${policy}": supported values: "Orphan", "Background", "Foreground"`,
      );
    const grace = q.has('gracePeriodSeconds') ? Number(q.get('gracePeriodSeconds')) : b.gracePeriodSeconds;
    return {
      propagationPolicy: policy,
      gracePeriodSeconds: grace === undefined || Number.isNaN(grace) ? undefined : Math.max(0, grace),
      preconditions: b.preconditions,
      dryRun: dryRun.includes('All'),
    };
  }

  private tokenRequest(namespace: string, name: string, body: unknown, warnings: string[]): unknown {
    const sa = this.core.store.get('core/serviceaccounts', `${namespace}/${name}`);
    if (!sa) throw errors.notFound('', 'serviceaccounts', name);
    const spec = { ...((body as any)?.spec ?? {}) };
    this.authn.defaultTokenRequestSpec(spec);
    // pkg/registry/core/serviceaccount/storage/token.go: the cap applies after validation, with a warning.
    const max = this.cfg.serviceAccountMaxTokenExpirationSeconds;
    const requested = spec.expirationSeconds;
    if (max && requested > max) {
      warnings.push(`requested expiration of ${requested} seconds shortened to ${max} seconds`);
      spec.expirationSeconds = max;
    }
    let bound: { kind: 'Pod'; name: string; uid: string } | undefined;
    if (spec.boundObjectRef?.kind === 'Pod') {
      const pod = this.core.store.get('core/pods', `${namespace}/${spec.boundObjectRef.name}`);
      if (!pod) throw errors.notFound('', 'pods', spec.boundObjectRef.name);
      bound = { kind: 'Pod', name: pod.metadata.name!, uid: pod.metadata.uid! };
    }
    const t = this.authn.issueServiceAccountToken(namespace, name, {
      expirationSeconds: spec.expirationSeconds,
      audiences: spec.audiences,
      boundObject: bound,
    });
    return {
      kind: 'TokenRequest',
      apiVersion: 'authentication.k8s.io/v1',
      metadata: { name, namespace, creationTimestamp: null },
      spec,
      status: t,
    };
  }
}

function boolParam(q: URLSearchParams, k: string): boolean {
  const v = q.get(k);
  return v === 'true' || v === '1';
}

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

/** Sends `obj` as JSON (a string is taken to be JSON already). */
export function sendJson(
  res: ServerResponse,
  code: number,
  obj: unknown,
  headers: Record<string, string | string[]> = {},
): void {
  const body = typeof obj === 'string' ? obj : JSON.stringify(obj);
  res.writeHead(code, {
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(body),
    ...headers,
  });
  res.end(body);
}

/** Lists are written in pieces: one JSON.stringify per item, no giant intermediate string. */
function sendList(
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
