// A GatewayExtension resolved on its own: for ext auth, the backing Service (a ReferenceGrant is needed when it is in
// another namespace) and the filter settings every route using it shares. The service is an HTTP one (Envoy's
// ext_authz http_service) or a gRPC one (grpc_service.envoy_grpc: its cluster speaks HTTP/2, as Envoy's gRPC client
// needs, whatever the Service port's appProtocol says).
import { type ExtensionGrpcService, type ExtensionServiceRef, type GatewayExtension, VENDOR_GROUP } from '../model.ts';
import { type RouteWorld, resolveServiceRef } from './backend-refs.ts';
import { toProtoDuration } from './duration.ts';
import type { ClusterIR, ExtAuthIR, ExtProcIR, ObjRef, Outcome, RateLimitExtIR } from './types.ts';

export interface ExtensionInfo {
  ref: ObjRef;
  generation: number;
  accepted: Outcome;
  resolvedRefs: Outcome;
  extAuth?: ExtAuthIR;
  rateLimit?: RateLimitExtIR;
  extProc?: ExtProcIR;
}

export const DEFAULT_EXT_AUTH_TIMEOUT = '1s';
/** Envoy's ratelimit filter's default timeout (rate_limit.proto: 20ms); GEP-2257 text, as a user writes it. */
export const DEFAULT_RATE_LIMIT_TIMEOUT = '20ms';
/** Envoy's ext_proc message_timeout default (ext_proc.proto: 200ms); GEP-2257 text, as a user writes it. */
export const DEFAULT_EXT_PROC_MESSAGE_TIMEOUT = '200ms';

type Base = Pick<ExtensionInfo, 'ref' | 'generation'>;

function invalid(base: Base, message: string): ExtensionInfo {
  return {
    ...base,
    accepted: { ok: false, reason: 'Invalid', message },
    resolvedRefs: { ok: false, reason: 'Invalid', message: 'not resolved: the extension is invalid' },
  };
}

const ACCEPTED: Outcome = { ok: true, reason: 'Accepted', message: 'the extension is valid' };

/** The Service port behind one of the extension's services, or the ResolvedRefs=False it earns. */
export function resolveExtensionService(
  world: RouteWorld,
  ns: string,
  b: ExtensionServiceRef,
  field: string,
  grpc: boolean,
): { cluster: ClusterIR; resolved: Outcome } | { resolved: Outcome } {
  const res = resolveServiceRef(
    world,
    { group: VENDOR_GROUP, kind: 'GatewayExtension', namespace: ns },
    { name: b.name, namespace: b.namespace, port: b.port },
    field,
  );
  if (res.error || !res.cluster)
    return { resolved: { ok: false, reason: res.error!.reason, message: res.error!.message } };
  const c: ClusterIR = grpc ? { ...res.cluster, protocol: 'http2' } : res.cluster;
  const resolved: Outcome = {
    ok: true,
    reason: 'ResolvedRefs',
    message: `backend Service ${c.namespace}/${c.service}:${c.port}${grpc ? ' (gRPC)' : ''}`,
  };
  return { cluster: c, resolved };
}

export function buildExtensionInfo(ext: GatewayExtension, world: RouteWorld): ExtensionInfo {
  const ns = ext.metadata.namespace ?? 'default';
  const ref: ObjRef = { kind: 'GatewayExtension', namespace: ns, name: ext.metadata.name };
  const base = { ref, generation: ext.metadata.generation ?? 1 };
  const kinds = (['extAuth', 'rateLimit', 'extProc'] as const).filter((k) => ext.spec?.[k] !== undefined);
  if (kinds.length !== 1) {
    return invalid(base, `spec: set exactly one of extAuth, rateLimit and extProc (has ${kinds.join(', ') || 'none'})`);
  }
  if (kinds[0] === 'rateLimit') return rateLimitExtension(ext, world, base);
  if (kinds[0] === 'extProc') return extProcExtension(ext, world, base);
  const ea = ext.spec?.extAuth;
  const http = ea?.httpService;
  const grpc = ea?.grpcService;
  if (!http?.backendRef && !grpc?.backendRef) {
    return invalid(base, 'spec.extAuth: set httpService.backendRef or grpcService.backendRef');
  }
  if (http && grpc) return invalid(base, 'spec.extAuth: set exactly one of httpService and grpcService');
  const field = grpc ? 'spec.extAuth.grpcService' : 'spec.extAuth.httpService';
  const svc = (grpc ?? http)!;
  const timeout = toProtoDuration(svc.timeout ?? DEFAULT_EXT_AUTH_TIMEOUT);
  if (!timeout) return invalid(base, `${field}.timeout: invalid duration ${JSON.stringify(svc.timeout)}`);
  const r = resolveExtensionService(world, ns, svc.backendRef, `${field}.backendRef`, grpc !== undefined);
  if (!('cluster' in r)) return { ...base, accepted: ACCEPTED, resolvedRefs: r.resolved };
  const c = r.cluster;
  return {
    ...base,
    accepted: ACCEPTED,
    resolvedRefs: r.resolved,
    extAuth: {
      filterName: `envoy.filters.http.ext_authz/${ns}/${ext.metadata.name}`,
      extension: ref,
      cluster: c,
      ...(grpc
        ? { grpc: grpc.authority ? { authority: grpc.authority } : {} }
        : { uri: `http://${c.service}.${c.namespace}.svc.cluster.local:${c.port}` }),
      ...(http?.pathPrefix ? { pathPrefix: http.pathPrefix } : {}),
      timeout,
      allowedHeaders: http?.allowedHeaders ?? ['x-ext-authz'],
      failOpen: ea!.failOpen ?? false,
      statusOnError: ea!.statusOnError ?? 403,
    },
  };
}

/** `rateLimit`: the rate-limit service (HTTP/2 cluster), its domain, timeout and failure mode. */
function rateLimitExtension(ext: GatewayExtension, world: RouteWorld, base: Base): ExtensionInfo {
  const rl = ext.spec!.rateLimit!;
  return grpcServiceExtension(world, base, 'rateLimit', 'envoy.filters.http.ratelimit', rl.grpcService, () => {
    if (!rl.domain) return 'spec.rateLimit.domain is required';
    const timeout = toProtoDuration(rl.timeout ?? DEFAULT_RATE_LIMIT_TIMEOUT);
    if (!timeout) return `spec.rateLimit.timeout: invalid duration ${JSON.stringify(rl.timeout)}`;
    return { domain: rl.domain, timeout, failOpen: rl.failOpen ?? true };
  });
}

/** `extProc`: the external processor (HTTP/2 cluster), which request phases it sees, its message timeout, failOpen. */
function extProcExtension(ext: GatewayExtension, world: RouteWorld, base: Base): ExtensionInfo {
  const ep = ext.spec!.extProc!;
  return grpcServiceExtension(world, base, 'extProc', 'envoy.filters.http.ext_proc', ep.grpcService, () => {
    const messageTimeout = toProtoDuration(ep.messageTimeout ?? DEFAULT_EXT_PROC_MESSAGE_TIMEOUT);
    if (!messageTimeout) return `spec.extProc.messageTimeout: invalid duration ${JSON.stringify(ep.messageTimeout)}`;
    return {
      requestHeaders: (ep.processingMode?.requestHeaders ?? 'Send') === 'Send',
      messageTimeout,
      failOpen: ep.failOpen ?? false,
    };
  });
}

/** What a gRPC-service extension's filter carries besides its name, the extension, the cluster and the authority. */
type GrpcFilterSettings<K extends 'rateLimit' | 'extProc'> = Omit<
  NonNullable<ExtensionInfo[K]>,
  'filterName' | 'extension' | 'cluster' | 'authority'
>;

/**
 * The one reader of an extension that is a gRPC service (rateLimit, extProc): its backendRef is required, then its own
 * settings are read (a string: the problem that makes the extension invalid), then the Service port is resolved to an
 * HTTP/2 cluster (Envoy's gRPC client needs one); the filter is `<filter>/<ns>/<name>`, one per extension.
 */
function grpcServiceExtension<K extends 'rateLimit' | 'extProc'>(
  world: RouteWorld,
  base: Base,
  kind: K,
  filter: string,
  grpcService: ExtensionGrpcService | undefined,
  readSettings: () => GrpcFilterSettings<K> | string,
): ExtensionInfo {
  const field = `spec.${kind}.grpcService.backendRef`;
  if (!grpcService?.backendRef) return invalid(base, `${field} is required`);
  const settings = readSettings();
  if (typeof settings === 'string') return invalid(base, settings);
  const r = resolveExtensionService(world, base.ref.namespace, grpcService.backendRef, field, true);
  if (!('cluster' in r)) return { ...base, accepted: ACCEPTED, resolvedRefs: r.resolved };
  return {
    ...base,
    accepted: ACCEPTED,
    resolvedRefs: r.resolved,
    [kind]: {
      filterName: `${filter}/${base.ref.namespace}/${base.ref.name}`,
      extension: base.ref,
      cluster: r.cluster,
      ...(grpcService.authority ? { authority: grpcService.authority } : {}),
      ...settings,
    },
  };
}
