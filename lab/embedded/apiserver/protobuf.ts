// Request bodies in Kubernetes' protobuf encoding. kubectl's typed clients (create namespace/secret/configmap/
// deployment/serviceaccount, run, create token, auth can-i, drain, ...) send `application/vnd.kubernetes.protobuf`
// and client-go has no JSON fallback for it, so the server decodes it: the `k8s\0` magic, a runtime.Unknown envelope
// naming apiVersion/kind, and the object as the generated message of its type. The message definitions are the
// Kubernetes API's own generated.proto files (kubernetes/api and kubernetes/apimachinery, Apache-2.0, comments
// stripped) under ./proto, loaded with protobufjs. Responses stay JSON, which every such client accepts.
import { join } from 'node:path';
import protobuf from 'protobufjs';
import { errors } from './errors.ts';

const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);
const PROTO_DIR = join(import.meta.dirname, 'proto');
const FILES = [
  'k8s.io/api/core/v1/generated.proto',
  'k8s.io/api/apps/v1/generated.proto',
  'k8s.io/api/rbac/v1/generated.proto',
  'k8s.io/api/authorization/v1/generated.proto',
  'k8s.io/api/authentication/v1/generated.proto',
  'k8s.io/api/coordination/v1/generated.proto',
  'k8s.io/api/discovery/v1/generated.proto',
  'k8s.io/api/policy/v1/generated.proto',
  'k8s.io/api/autoscaling/v1/generated.proto',
];
/** API group → the package directory of its generated.proto. */
const GROUP_PACKAGE: Record<string, string> = {
  '': 'core',
  apps: 'apps',
  'rbac.authorization.k8s.io': 'rbac',
  'authorization.k8s.io': 'authorization',
  'authentication.k8s.io': 'authentication',
  'coordination.k8s.io': 'coordination',
  'discovery.k8s.io': 'discovery',
  policy: 'policy',
  autoscaling: 'autoscaling',
};
const META = 'k8s.io.apimachinery.pkg.apis.meta.v1';
/** Kinds that live in meta/v1 whatever the group they are sent to. */
const META_KINDS = new Set([
  'DeleteOptions',
  'CreateOptions',
  'UpdateOptions',
  'PatchOptions',
  'ListOptions',
  'GetOptions',
]);

let root: protobuf.Root | undefined;

function loadRoot(): protobuf.Root {
  if (root) return root;
  const r = new protobuf.Root();
  r.resolvePath = (_origin, target) => join(PROTO_DIR, target);
  r.loadSync(FILES, { keepCase: true });
  r.resolveAll();
  root = r;
  return r;
}

export function isProtobuf(contentType: string): boolean {
  return contentType.split(';')[0].trim().toLowerCase() === 'application/vnd.kubernetes.protobuf';
}

/** Decodes a protobuf request body to the object's JSON form (as the JSON serializer would have produced it). */
export function decodeProtobuf(body: Buffer): Record<string, unknown> {
  if (body.length < 4 || !body.subarray(0, 4).equals(MAGIC))
    throw errors.badRequest('the protobuf body does not start with the Kubernetes magic number "k8s\\x00"');
  const r = loadRoot();
  let apiVersion: string;
  let kind: string;
  let raw: Uint8Array;
  try {
    const u = r.lookupType('k8s.io.apimachinery.pkg.runtime.Unknown').decode(body.subarray(4)) as any;
    apiVersion = u.typeMeta?.apiVersion ?? '';
    kind = u.typeMeta?.kind ?? '';
    raw = u.raw ?? new Uint8Array();
  } catch (e) {
    throw errors.badRequest(`the protobuf body could not be decoded: ${(e as Error).message}`);
  }
  const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion];
  const name = META_KINDS.has(kind)
    ? `${META}.${kind}`
    : `k8s.io.api.${GROUP_PACKAGE[group] ?? '?'}.${version}.${kind}`;
  let type: protobuf.Type;
  try {
    type = r.lookupType(name);
  } catch {
    throw errors.unsupportedMediaType('application/vnd.kubernetes.protobuf', ['application/json', 'application/yaml']);
  }
  let msg: protobuf.Message;
  try {
    msg = type.decode(raw);
  } catch (e) {
    throw errors.badRequest(`the protobuf body could not be decoded as ${kind}: ${(e as Error).message}`);
  }
  const obj = toJson(type, msg) as Record<string, unknown>;
  return { apiVersion, kind, ...obj };
}

function rfc3339(seconds: number, nanos: number, micro: boolean): string {
  const d = new Date(seconds * 1000);
  const base = d.toISOString().slice(0, 19);
  return micro ? `${base}.${String(Math.floor(nanos / 1000)).padStart(6, '0')}Z` : `${base}Z`;
}

function num(v: unknown): number {
  if (typeof v === 'number') return v;
  if (v && typeof v === 'object' && 'low' in v) return protobuf.util.LongBits.from(v as protobuf.Long).toNumber();
  return Number(v);
}

function goDuration(ns: number): string {
  if (ns === 0) return '0s';
  const neg = ns < 0;
  let s = Math.abs(ns) / 1e9;
  const h = Math.floor(s / 3600);
  s -= h * 3600;
  const m = Math.floor(s / 60);
  s -= m * 60;
  const sec = Number.isInteger(s) ? String(s) : String(Math.round(s * 1e9) / 1e9);
  return `${neg ? '-' : ''}${h ? `${h}h` : ''}${h || m ? `${m}m` : ''}${sec}s`;
}

/** A decoded message → the JSON Kubernetes would produce, with the special types' JSON forms. */
function special(fullName: string, v: any): { ok: true; value: unknown } | { ok: false } {
  switch (fullName) {
    case `.${META}.Time`:
    case `.${META}.MicroTime`: {
      const sec = num(v.seconds ?? 0);
      const nanos = num(v.nanos ?? 0);
      // Go's zero time is null in JSON.
      if (!sec && !nanos) return { ok: true, value: undefined };
      return { ok: true, value: rfc3339(sec, nanos, fullName.endsWith('MicroTime')) };
    }
    case `.${META}.Duration`:
      return { ok: true, value: goDuration(num(v.duration ?? 0)) };
    case '.k8s.io.apimachinery.pkg.util.intstr.IntOrString':
      return { ok: true, value: num(v.type ?? 0) === 1 ? (v.strVal ?? '') : num(v.intVal ?? 0) };
    case '.k8s.io.apimachinery.pkg.api.resource.Quantity':
      return { ok: true, value: v.string ?? '0' };
    case '.k8s.io.apimachinery.pkg.runtime.RawExtension':
    case `.${META}.FieldsV1`: {
      const raw: Uint8Array | undefined = v.raw ?? v.Raw;
      if (!raw?.length) return { ok: true, value: undefined };
      try {
        return { ok: true, value: JSON.parse(Buffer.from(raw).toString('utf8')) };
      } catch {
        return { ok: true, value: undefined };
      }
    }
    default:
      return { ok: false };
  }
}

function convertValue(field: protobuf.Field, v: unknown): unknown {
  if (field.resolvedType instanceof protobuf.Type) {
    const sp = special(field.resolvedType.fullName, v);
    if (sp.ok) return sp.value;
    return toJson(field.resolvedType, v as protobuf.Message);
  }
  if (v instanceof Uint8Array) return Buffer.from(v).toString('base64');
  if (['int64', 'uint64', 'sint64', 'fixed64', 'sfixed64'].includes(field.type)) return num(v);
  // Go marshals every non-pointer string, empty or not; its JSON (omitempty) leaves empty ones out.
  if (v === '' && field.type === 'string' && !field.repeated) return undefined;
  return v;
}

function toJson(type: protobuf.Type, msg: protobuf.Message | Record<string, any>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const m = msg as Record<string, any>;
  for (const field of type.fieldsArray) {
    if (!Object.hasOwn(m, field.name)) continue;
    const v = m[field.name];
    if (v === undefined || v === null) continue;
    if (field instanceof protobuf.MapField || (field as any).map) {
      const entries = Object.entries(v as Record<string, unknown>);
      if (!entries.length) continue;
      out[field.name] = Object.fromEntries(entries.map(([k, x]) => [k, x === '' ? '' : convertValue(field, x)]));
    } else if (field.repeated) {
      if (!(v as unknown[]).length) continue;
      out[field.name] = (v as unknown[]).map((x) => (x === '' ? '' : convertValue(field, x)));
    } else {
      const c = convertValue(field, v);
      if (c !== undefined) out[field.name] = c;
    }
  }
  return out;
}
