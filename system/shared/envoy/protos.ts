// The Envoy v3 protos that ship in @grpc/grpc-js-xds, loaded once with protobufjs (field names kept in snake_case, as
// in the .proto files and in Envoy's own JSON). The control plane and the proxy share this root, so both sides agree
// on every type and type URL. Types outside the preloaded set are loaded on first lookup from their package's folder
// (Envoy's package names mirror the folder layout), so any real Envoy type can be decoded, e.g. in a NACKed resource.
// The parsed root is kept as JSON beside Node's compile cache (proto-cache.ts): every proxy start parsed the same ~300
// .proto files again (~160 ms of CPU, and a test run starts ~150 proxies). The gRPC service definitions are built from
// this same root as @grpc/proto-loader builds them, instead of proto-loader parsing the files a second time.
import { existsSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type * as grpc from '@grpc/grpc-js';
import protobuf from 'protobufjs';
import { readCachedRoot, writeCachedRoot } from './proto-cache.ts';

const require = createRequire(import.meta.url);

/** Folders of the bundled protos, in the include order protoc would use. */
export const PROTO_INCLUDE_DIRS: readonly string[] = (() => {
  const deps = path.join(path.dirname(require.resolve('@grpc/grpc-js-xds/package.json')), 'deps');
  return ['envoy-api', 'xds', 'googleapis', 'protoc-gen-validate'].map((d) => path.join(deps, d));
})();

/** Every file the project needs up front: config types, the filters the proxy implements, admin dumps and ADS. */
export const PRELOADED_PROTO_FILES: readonly string[] = [
  'envoy/config/bootstrap/v3/bootstrap.proto',
  'envoy/config/listener/v3/listener.proto',
  'envoy/config/route/v3/route.proto',
  'envoy/config/cluster/v3/cluster.proto',
  'envoy/config/endpoint/v3/endpoint.proto',
  'envoy/extensions/filters/network/http_connection_manager/v3/http_connection_manager.proto',
  'envoy/extensions/filters/http/router/v3/router.proto',
  'envoy/extensions/filters/http/cors/v3/cors.proto',
  'envoy/extensions/filters/http/local_ratelimit/v3/local_rate_limit.proto',
  'envoy/extensions/filters/http/ext_authz/v3/ext_authz.proto',
  'envoy/extensions/filters/http/ratelimit/v3/rate_limit.proto',
  'envoy/extensions/filters/http/ext_proc/v3/ext_proc.proto',
  'envoy/extensions/filters/http/fault/v3/fault.proto',
  'envoy/extensions/upstreams/http/v3/http_protocol_options.proto',
  'envoy/extensions/access_loggers/file/v3/file.proto',
  'envoy/extensions/access_loggers/stream/v3/stream.proto',
  'envoy/admin/v3/config_dump.proto',
  'envoy/admin/v3/listeners.proto',
  'envoy/admin/v3/clusters.proto',
  'envoy/admin/v3/server_info.proto',
  'envoy/service/discovery/v3/ads.proto',
  'google/protobuf/wrappers.proto',
  'google/protobuf/struct.proto',
  'google/protobuf/field_mask.proto',
  'google/protobuf/empty.proto',
];

const TYPE_PREFIX = 'type.googleapis.com/';

export const TYPE_URL = {
  listener: `${TYPE_PREFIX}envoy.config.listener.v3.Listener`,
  routeConfiguration: `${TYPE_PREFIX}envoy.config.route.v3.RouteConfiguration`,
  cluster: `${TYPE_PREFIX}envoy.config.cluster.v3.Cluster`,
  clusterLoadAssignment: `${TYPE_PREFIX}envoy.config.endpoint.v3.ClusterLoadAssignment`,
} as const;

/** `type.googleapis.com/a.b.C` (or any `<host>/a.b.C`) → `a.b.C`. */
export function typeNameOf(typeUrl: string): string {
  const slash = typeUrl.lastIndexOf('/');
  return slash < 0 ? typeUrl : typeUrl.slice(slash + 1);
}

export function typeUrlOf(typeName: string): string {
  return TYPE_PREFIX + typeName.replace(/^\./, '');
}

let commonAdded = false;
/** protobufjs bundles only some well-known types; the Envoy protos also import descriptor.proto (custom options). */
function addCommonProtos(): void {
  if (commonAdded) return;
  commonAdded = true;
  for (const name of ['api', 'descriptor', 'source_context', 'type']) {
    const json = require(`protobufjs/google/protobuf/${name}.json`);
    protobuf.common(name, json.nested.google.nested.protobuf.nested);
  }
}

function resolveInclude(target: string): string | undefined {
  if (path.isAbsolute(target)) return target;
  for (const dir of PROTO_INCLUDE_DIRS) {
    const full = path.join(dir, target);
    if (existsSync(full)) return full;
  }
  return undefined;
}

let root: protobuf.Root | undefined;

/** What the cached root depends on: the protos' folders (their package versions) and the preloaded files. */
function cacheInputs(): unknown[] {
  const version = (pkg: string) => require(`${pkg}/package.json`).version as string;
  return [version('protobufjs'), version('@grpc/grpc-js-xds'), PROTO_INCLUDE_DIRS, PRELOADED_PROTO_FILES];
}

/** The shared root, loaded on first use, with every type in PRELOADED_PROTO_FILES resolved. */
export function envoyRoot(): protobuf.Root {
  if (root) return root;
  addCommonProtos();
  const inputs = cacheInputs();
  const cached = readCachedRoot(inputs);
  const r = cached ?? new protobuf.Root();
  // Unresolved names fall through to protobufjs' bundled well-known types (google/protobuf/*.proto).
  r.resolvePath = (_origin, target) => resolveInclude(target) ?? target;
  if (!cached) {
    r.loadSync([...PRELOADED_PROTO_FILES], { keepCase: true });
    r.resolveAll();
    writeCachedRoot(inputs, r);
  }
  root = r;
  return r;
}

/** The root parsed from the .proto files, never the cache (for the test that compares the two). */
export function parseEnvoyRootUncached(): protobuf.Root {
  addCommonProtos();
  const r = new protobuf.Root();
  r.resolvePath = (_origin, target) => resolveInclude(target) ?? target;
  r.loadSync([...PRELOADED_PROTO_FILES], { keepCase: true });
  r.resolveAll();
  return r;
}

const triedPackages = new Set<string>();

/** Loads every .proto file of a package's folder (e.g. envoy.extensions.filters.http.lua.v3), once. */
function loadPackage(pkg: string): boolean {
  if (triedPackages.has(pkg)) return false;
  triedPackages.add(pkg);
  const rel = pkg.split('.').join('/');
  if (!/^[a-z0-9_./]+$/.test(rel)) return false;
  for (const dir of PROTO_INCLUDE_DIRS) {
    const folder = path.join(dir, rel);
    if (!existsSync(folder)) continue;
    const files = readdirSync(folder)
      .filter((f) => f.endsWith('.proto'))
      .map((f) => `${rel}/${f}`);
    if (files.length === 0) continue;
    const r = envoyRoot();
    r.loadSync(files, { keepCase: true });
    r.resolveAll();
    return true;
  }
  return false;
}

/** Looks a message type up by full name (leading dot optional); loads its package on a miss. Throws when unknown. */
export function lookupType(fullName: string): protobuf.Type {
  const name = fullName.replace(/^\./, '');
  const r = envoyRoot();
  const found = tryLookup(r, name);
  if (found) return found;
  const pkg = name.split('.').slice(0, -1);
  // A nested message (a.b.v3.Outer.Inner) lives in the package of its outer type: try shorter prefixes too.
  while (pkg.length > 0) {
    if (loadPackage(pkg.join('.'))) {
      const again = tryLookup(r, name);
      if (again) return again;
    }
    pkg.pop();
  }
  throw new Error(`unknown protobuf type ${name}`);
}

/** Like lookupType, but undefined instead of an exception. */
export function findType(fullName: string): protobuf.Type | undefined {
  try {
    return lookupType(fullName);
  } catch {
    return undefined;
  }
}

function tryLookup(r: protobuf.Root, name: string): protobuf.Type | undefined {
  const obj = r.lookup(name);
  return obj instanceof protobuf.Type ? obj : undefined;
}

export function lookupEnum(fullName: string): protobuf.Enum {
  const obj = envoyRoot().lookup(fullName.replace(/^\./, ''));
  if (!(obj instanceof protobuf.Enum)) throw new Error(`unknown protobuf enum ${fullName}`);
  return obj;
}

const services = new Map<string, grpc.ServiceDefinition>();

/**
 * The grpc-js service definition of the Envoy API service `name` (e.g. `envoy.service.auth.v3.Authorization`) in
 * `protoFile`, built once. Messages are plain objects: snake_case fields, enums as strings, oneofs named, repeated
 * fields always arrays, unset fields absent (no defaults: a default would set every oneof member); 64-bit ints as
 * strings, or numbers with `longs: Number` (counters the samples compare). This is what @grpc/proto-loader's
 * loadSync with those options gives (its createMethodDefinition: fromObject + encode, decode + toObject), from the
 * shared root.
 */
export function envoyService(
  protoFile: string,
  name: string,
  o: { longs?: typeof String | typeof Number } = {},
): grpc.ServiceDefinition {
  const key = `${protoFile} ${name} ${o.longs === Number ? 'number' : 'string'}`;
  const hit = services.get(key);
  if (hit) return hit;
  const service = lookupService(protoFile, name);
  const options: protobuf.IConversionOptions = { longs: o.longs ?? String, enums: String, arrays: true, oneofs: true };
  const def: Record<string, grpc.MethodDefinition<object, object>> = {};
  for (const m of service.methodsArray) {
    const req = m.resolvedRequestType;
    const res = m.resolvedResponseType;
    if (!req || !res) throw new Error(`${name}.${m.name}: request or response type not resolved`);
    def[m.name] = {
      path: `/${name}/${m.name}`,
      requestStream: !!m.requestStream,
      responseStream: !!m.responseStream,
      requestSerialize: serializer(req),
      requestDeserialize: deserializer(req, options),
      responseSerialize: serializer(res),
      responseDeserialize: deserializer(res, options),
      originalName: m.name[0]!.toLowerCase() + m.name.slice(1),
    };
  }
  services.set(key, def);
  return def;
}

/** The service `name`, its file loaded into the shared root first when it is not there yet. */
function lookupService(protoFile: string, name: string): protobuf.Service {
  const r = envoyRoot();
  let found = r.lookup(name);
  if (!(found instanceof protobuf.Service)) {
    r.loadSync(protoFile, { keepCase: true });
    r.resolveAll();
    found = r.lookup(name);
  }
  if (!(found instanceof protobuf.Service)) throw new Error(`${protoFile} has no service ${name}`);
  found.resolveAll();
  return found;
}

function serializer(t: protobuf.Type): (value: object) => Buffer {
  return (value) => {
    if (Array.isArray(value))
      throw new Error(`Failed to serialize message: expected object with ${t.name} structure, got array instead`);
    const bytes = t.encode(t.fromObject(value)).finish();
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  };
}

function deserializer(t: protobuf.Type, options: protobuf.IConversionOptions): (bytes: Buffer) => object {
  return (bytes) => t.toObject(t.decode(bytes), options);
}

/**
 * The grpc-js service definition of envoy.service.discovery.v3.AggregatedDiscoveryService, for the control plane's
 * server and the proxy's client alike (envoyService: resources as `Any {type_url, value: Buffer}`). fromGrpcObject()
 * (protojson.ts) turns one of its messages into canonical JSON, e.g. a request's node.
 */
export function adsService(): grpc.ServiceDefinition {
  return envoyService('envoy/service/discovery/v3/ads.proto', 'envoy.service.discovery.v3.AggregatedDiscoveryService');
}

export const ADS_METHOD = {
  stream: '/envoy.service.discovery.v3.AggregatedDiscoveryService/StreamAggregatedResources',
  delta: '/envoy.service.discovery.v3.AggregatedDiscoveryService/DeltaAggregatedResources',
} as const;
