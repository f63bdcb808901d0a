// Subresources (k8s.io/apiserver endpoints/handlers, and the registries of pkg/registry): `status` (a write takes
// status only), `scale` (autoscaling/v1 Scale), `namespaces/finalize`, `serviceaccounts/token` (TokenRequest), and
// the ones other modules register (pods/log, exec, portforward from the node agent), which write their own
// responses, streams included.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { UserInfo } from '../authn.ts';
import { errors } from '../errors.ts';
import { boolParam } from '../request-info.ts';
import { getScale, patchScale, updateScale } from '../scale.ts';
import type { K8sObject } from '../store.ts';
import { type RequestScope, respond } from './scope.ts';
import { writeOptions } from './write.ts';

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

/** Serves `<resource>/<name>/<sub>`; true when the response is a stream that logs itself when it ends. */
export async function subresource(
  s: RequestScope,
  sub: string,
  registered: Map<string, SubresourceHandler>,
): Promise<boolean> {
  const { core, rt, ns, q } = s;
  const name = s.info.name!;
  const method = s.req.method ?? 'GET';
  const decoded = () => core.decode(s.body, s.contentType);
  if (sub === 'status' && rt.status) {
    if (method === 'GET') return respond(s, 200, core.get(rt, ns, name));
    const wo = writeOptions(s.req, q, s.user);
    s.rec.dryRun = wo.dryRun;
    if (method === 'PUT') return respond(s, 200, core.update(rt, ns, name, decoded(), wo, 'status'), wo.warnings);
    if (method === 'PATCH') {
      const r = core.patch(rt, ns, name, s.contentType, s.body, { ...wo, force: boolParam(q, 'force') }, 'status');
      return respond(s, 200, r.obj, wo.warnings);
    }
    throw errors.methodNotAllowed();
  }
  if (sub === 'scale' && rt.scale) {
    if (method === 'GET') return respond(s, 200, getScale(core, rt, ns, name));
    const wo = writeOptions(s.req, q, s.user);
    s.rec.dryRun = wo.dryRun;
    if (method === 'PUT') return respond(s, 200, updateScale(core, rt, ns, name, decoded(), wo));
    if (method === 'PATCH') return respond(s, 200, patchScale(core, rt, ns, name, s.contentType, s.body, wo));
    throw errors.methodNotAllowed();
  }
  if (sub === 'finalize' && rt.builtin && rt.plural === 'namespaces') {
    if (method !== 'PUT') throw errors.methodNotAllowed();
    const wo = writeOptions(s.req, q, s.user);
    return respond(s, 200, core.update(rt, undefined, name, decoded(), wo, 'finalize'));
  }
  if (sub === 'token' && rt.builtin && rt.plural === 'serviceaccounts') {
    if (method !== 'POST') throw errors.methodNotAllowed();
    const warnings: string[] = [];
    return respond(s, 201, tokenRequest(s, ns!, name, decoded(), warnings), warnings);
  }
  const handler = registered.get(`${rt.plural}/${sub}`);
  if (handler && rt.builtin) return serveRegistered(s, handler);
  throw errors.noResource();
}

/** A registered subresource writes its own response; the request log gets its line when the response closes. */
async function serveRegistered(s: RequestScope, handler: SubresourceHandler): Promise<true> {
  const { rec, res } = s;
  const object = s.core.get(s.rt, s.ns, s.info.name!);
  rec.code = 200;
  s.finishAudit('ResponseStarted');
  res.on('close', () => {
    rec.code = res.statusCode;
    s.finishAudit();
  });
  await handler({
    user: s.user,
    verb: s.info.verb,
    namespace: s.ns ?? '',
    name: s.info.name!,
    resource: s.rt.plural,
    subresource: s.info.subresource!,
    query: s.q,
    req: s.req,
    res,
    object,
  });
  return true;
}

/** serviceaccounts/token (TokenRequest): defaults and validation (authn.ts), the lifetime cap, the bound Pod. */
function tokenRequest(s: RequestScope, namespace: string, name: string, body: unknown, warnings: string[]): unknown {
  const sa = s.core.store.get('core/serviceaccounts', `${namespace}/${name}`);
  if (!sa) throw errors.notFound('', 'serviceaccounts', name);
  const spec = { ...((body as any)?.spec ?? {}) };
  s.authn.defaultTokenRequestSpec(spec);
  // pkg/registry/core/serviceaccount/storage/token.go: the cap applies after validation, with a warning.
  const max = s.cfg.serviceAccountMaxTokenExpirationSeconds;
  const requested = spec.expirationSeconds;
  if (max && requested > max) {
    warnings.push(`requested expiration of ${requested} seconds shortened to ${max} seconds`);
    spec.expirationSeconds = max;
  }
  let bound: { kind: 'Pod'; name: string; uid: string } | undefined;
  if (spec.boundObjectRef?.kind === 'Pod') {
    const pod = s.core.store.get('core/pods', `${namespace}/${spec.boundObjectRef.name}`);
    if (!pod) throw errors.notFound('', 'pods', spec.boundObjectRef.name);
    bound = { kind: 'Pod', name: pod.metadata.name!, uid: pod.metadata.uid! };
  }
  const t = s.authn.issueServiceAccountToken(namespace, name, {
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
