// create, update, delete and deletecollection (k8s.io/apiserver endpoints/handlers create.go, update.go, delete.go):
// the request's write options (dryRun, fieldManager, fieldValidation) and DeleteOptions, then the verb (core.ts).
// A delete that removes the object answers with a Status (as Kubernetes does for all but pods), one that only marks
// it (finalizers, graceful pod deletion, Foreground) with the object.
import type { IncomingMessage } from 'node:http';
import type { UserInfo } from '../authn.ts';
import { errors } from '../errors.ts';
import type { DeleteOptions, FieldValidation, WriteOptions } from '../options.ts';
import { gv } from '../resources.ts';
import { type RequestScope, respond } from './scope.ts';

/** dryRun, fieldManager and fieldValidation of a write, checked as Kubernetes checks them. */
export function writeOptions(req: IncomingMessage, q: URLSearchParams, user: UserInfo): WriteOptions {
  const dryRun = q.getAll('dryRun');
  if (dryRun.some((d) => d !== 'All'))
    throw errors.badRequest(`dryRun: Unsupported value: "${dryRun.find((d) => d !== 'All')}": supported values: "All"`);
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

/** DeleteOptions from the query and the body (propagationPolicy or orphanDependents, grace period, preconditions). */
export function deleteOptions(q: URLSearchParams, body: Buffer): DeleteOptions {
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

/** POST to a collection. */
export function create(s: RequestScope): false {
  if (s.info.name) throw errors.methodNotAllowed();
  const wo = writeOptions(s.req, s.q, s.user);
  s.rec.dryRun = wo.dryRun;
  const obj = s.core.create(s.rt, s.ns, s.core.decode(s.body, s.contentType), wo);
  s.rec.name = obj.metadata.name;
  return respond(s, 201, obj, wo.warnings);
}

/** PUT of an object. */
export function update(s: RequestScope): false {
  const name = s.info.name;
  if (!name) throw errors.methodNotAllowed();
  const wo = writeOptions(s.req, s.q, s.user);
  s.rec.dryRun = wo.dryRun;
  return respond(s, 200, s.core.update(s.rt, s.ns, name, s.core.decode(s.body, s.contentType), wo), wo.warnings);
}

/** DELETE of an object, or of a collection (deletecollection, with the list's selectors). */
export function remove(s: RequestScope): false {
  const { core, rt, q } = s;
  const opts = { ...deleteOptions(q, s.body), user: s.user, warnings: [] as string[] };
  s.rec.dryRun = opts.dryRun;
  const name = s.info.name;
  if (name) {
    const r = core.delete(rt, s.ns, name, opts);
    if (r.deleted && !(rt.builtin && rt.plural === 'pods')) {
      return respond(
        s,
        200,
        {
          kind: 'Status',
          apiVersion: 'v1',
          metadata: {},
          status: 'Success',
          details: { name, group: rt.group || undefined, kind: rt.plural, uid: r.obj.metadata.uid },
        },
        opts.warnings,
      );
    }
    return respond(s, r.deleted ? 200 : opts.propagationPolicy === 'Foreground' ? 202 : 200, r.obj, opts.warnings);
  }
  const items = core.deleteCollection(
    rt,
    s.ns,
    { labelSelector: q.get('labelSelector'), fieldSelector: q.get('fieldSelector') },
    opts,
  );
  return respond(s, 200, {
    kind: rt.listKind,
    apiVersion: gv(rt),
    metadata: { resourceVersion: String(core.store.revision()) },
    items,
  });
}
