// The Envoy v3 protos that ship in @grpc/grpc-js-xds, loaded once with protobufjs (field names kept in snake_case, as
// in the .proto files and in Envoy's own JSON). The control plane and the proxy share this root, so both sides agree
// on every type and type URL. Types outside the preloaded set are loaded on first lookup from their package's folder
// (Envoy's package names mirror the folder layout), so any real Envoy type can be decoded, e.g. in a NACKed resource.
import { existsSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import protobuf from 'protobufjs';

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

/** The shared root, loaded on first use (about a second), with every type in PRELOADED_PROTO_FILES resolved. */
export function envoyRoot(): protobuf.Root {
  if (root) return root;
  addCommonProtos();
  const r = new protobuf.Root();
  // Unresolved names fall through to protobufjs' bundled well-known types (google/protobuf/*.proto).
  r.resolvePath = (_origin, target) => resolveInclude(target) ?? target;
  r.loadSync([...PRELOADED_PROTO_FILES], { keepCase: true });
  r.resolveAll();
  root = r;
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
 * `protoFile`, loaded once. Messages are plain objects: snake_case fields, enums as strings, oneofs named, repeated
 * fields always arrays, unset fields absent (no defaults: a default would set every oneof member); 64-bit ints as
 * strings, or numbers with `longs: Number` (counters the samples compare).
 */
export function envoyService(
  protoFile: string,
  name: string,
  o: { longs?: typeof String | typeof Number } = {},
): grpc.ServiceDefinition {
  const key = `${protoFile} ${name} ${o.longs === Number ? 'number' : 'string'}`;
  const hit = services.get(key);
  if (hit) return hit;
  const def = protoLoader.loadSync(protoFile, {
    keepCase: true,
    longs: o.longs ?? String,
    enums: String,
    arrays: true,
    oneofs: true,
    includeDirs: [...PROTO_INCLUDE_DIRS],
  });
  let node: any = grpc.loadPackageDefinition(def);
  for (const part of name.split('.')) node = node?.[part];
  if (!node?.service) throw new Error(`${protoFile} has no service ${name}`);
  services.set(key, node.service as grpc.ServiceDefinition);
  return node.service as grpc.ServiceDefinition;
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
