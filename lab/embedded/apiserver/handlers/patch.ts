// patch (k8s.io/apiserver endpoints/handlers/patch.go): JSON patch, merge patch, strategic merge patch (built-in
// kinds) and server-side apply, with `force` for apply; an apply to an absent object creates it (201). The patch
// itself is core.ts's.
import { errors } from '../errors.ts';
import { boolParam } from '../request-info.ts';
import { type RequestScope, respond } from './scope.ts';
import { writeOptions } from './write.ts';

export function patch(s: RequestScope): false {
  const name = s.info.name;
  if (!name) throw errors.methodNotAllowed();
  const wo = writeOptions(s.req, s.q, s.user);
  s.rec.dryRun = wo.dryRun;
  const r = s.core.patch(s.rt, s.ns, name, s.contentType, s.body, { ...wo, force: boolParam(s.q, 'force') });
  return respond(s, r.created ? 201 : 200, r.obj, wo.warnings);
}
