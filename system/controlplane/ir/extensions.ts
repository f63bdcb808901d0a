// A GatewayExtension resolved on its own: for ext auth, the backing Service (a ReferenceGrant is needed when it is in
// another namespace) and the filter settings every route using it shares.
import { type GatewayExtension, VENDOR_GROUP } from '../model.ts';
import { toProtoDuration } from './duration.ts';
import { type RouteWorld, resolveServiceRef } from './routes.ts';
import type { ExtAuthIR, ObjRef, Outcome } from './types.ts';

export interface ExtensionInfo {
  ref: ObjRef;
  generation: number;
  accepted: Outcome;
  resolvedRefs: Outcome;
  extAuth?: ExtAuthIR;
}

export const DEFAULT_EXT_AUTH_TIMEOUT = '1s';

export function buildExtensionInfo(ext: GatewayExtension, world: RouteWorld): ExtensionInfo {
  const ns = ext.metadata.namespace ?? 'default';
  const ref: ObjRef = { kind: 'GatewayExtension', namespace: ns, name: ext.metadata.name };
  const base = { ref, generation: ext.metadata.generation ?? 1 };
  const ea = ext.spec?.extAuth;
  if (!ea?.httpService?.backendRef) {
    return {
      ...base,
      accepted: { ok: false, reason: 'Invalid', message: 'spec.extAuth.httpService.backendRef is required' },
      resolvedRefs: { ok: false, reason: 'Invalid', message: 'nothing to resolve' },
    };
  }
  const timeout = toProtoDuration(ea.httpService.timeout ?? DEFAULT_EXT_AUTH_TIMEOUT);
  if (!timeout) {
    return {
      ...base,
      accepted: {
        ok: false,
        reason: 'Invalid',
        message: `spec.extAuth.httpService.timeout: invalid duration ${JSON.stringify(ea.httpService.timeout)}`,
      },
      resolvedRefs: { ok: false, reason: 'Invalid', message: 'not resolved: the extension is invalid' },
    };
  }
  const b = ea.httpService.backendRef;
  const res = resolveServiceRef(
    world,
    { group: VENDOR_GROUP, kind: 'GatewayExtension', namespace: ns },
    { name: b.name, namespace: b.namespace, port: b.port },
    'spec.extAuth.httpService.backendRef',
  );
  const accepted: Outcome = { ok: true, reason: 'Accepted', message: 'the extension is valid' };
  if (res.error || !res.cluster) {
    return { ...base, accepted, resolvedRefs: { ok: false, reason: res.error!.reason, message: res.error!.message } };
  }
  const c = res.cluster;
  return {
    ...base,
    accepted,
    resolvedRefs: {
      ok: true,
      reason: 'ResolvedRefs',
      message: `backend Service ${c.namespace}/${c.service}:${c.port}`,
    },
    extAuth: {
      filterName: `envoy.filters.http.ext_authz/${ns}/${ext.metadata.name}`,
      extension: ref,
      cluster: c,
      uri: `http://${c.service}.${c.namespace}.svc.cluster.local:${c.port}`,
      ...(ea.httpService.pathPrefix ? { pathPrefix: ea.httpService.pathPrefix } : {}),
      timeout,
      allowedHeaders: ea.httpService.allowedHeaders ?? ['x-ext-authz'],
      failOpen: ea.failOpen ?? false,
      statusOnError: ea.statusOnError ?? 403,
    },
  };
}
