// Request bodies in Kubernetes' protobuf encoding. kubectl's typed commands (create namespace/configmap/secret/
// deployment/serviceaccount/token, run, expose, auth can-i/whoami) send `application/vnd.kubernetes.protobuf`, and
// client-go has no JSON fallback for it, so the server decodes it: the `k8s\0` magic, a runtime.Unknown envelope
// naming apiVersion/kind, and the object as the message of its kind. The messages are described by our own table
// (protobuf-messages.ts) and read with protobufjs' wire reader. A field the table does not know is refused with 415,
// naming the message and field number, rather than dropped: the object would otherwise be stored without it.
// Responses stay JSON, which every such client accepts.
import protobuf from 'protobufjs';
import { ApiError, errors } from './errors.ts';
import { KINDS, MESSAGES } from './protobuf-messages.ts';

const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);
const MEDIA_TYPE = 'application/vnd.kubernetes.protobuf';
const ACCEPTED = [
  'application/json',
  'application/yaml',
  'application/merge-patch+json',
  'application/apply-patch+yaml',
];

export function isProtobuf(contentType: string): boolean {
  return contentType.split(';')[0].trim().toLowerCase() === MEDIA_TYPE;
}

const WIRE = { varint: 0, bytes: 2 } as const;
const SCALARS = new Set(['string', 'bytes', 'bool', 'int32', 'int64']);

function unsupported(what: string): ApiError {
  return new ApiError(
    415,
    'UnsupportedMediaType',
    `${what}: this server decodes only the protobuf fields that kubectl's create/run/expose/auth commands send; ` +
      `send the object as JSON instead (accepted media types: ${ACCEPTED.join(', ')}), e.g. write it to a file ` +
      'and run `kubectl apply -f <file>`',
  );
}

/** Decodes a protobuf request body to the object's JSON form (as the JSON serializer would have produced it). */
export function decodeProtobuf(body: Buffer): Record<string, unknown> {
  if (body.length < 4 || !body.subarray(0, 4).equals(MAGIC))
    throw errors.badRequest('the protobuf body does not start with the Kubernetes magic number "k8s\\x00"');
  const envelope = decodeOrBadRequest('runtime.Unknown', body.subarray(4), 'the protobuf envelope (runtime.Unknown)');
  const typeMeta = (envelope.typeMeta ?? {}) as { apiVersion?: string; kind?: string };
  const apiVersion = typeMeta.apiVersion ?? '';
  const kind = typeMeta.kind ?? '';
  if (envelope.contentEncoding) throw unsupported(`protobuf content encoding "${envelope.contentEncoding}"`);
  const message = KINDS[`${apiVersion} ${kind}`];
  if (!message) throw unsupported(`protobuf bodies of kind ${kind || '(none)'} (${apiVersion || 'no apiVersion'})`);
  const raw = Buffer.from((envelope.raw as string | undefined) ?? '', 'base64');
  const obj = decodeOrBadRequest(message, raw, `the protobuf body as ${kind}`);
  return { apiVersion, kind, ...obj };
}

function decodeOrBadRequest(message: string, bytes: Uint8Array, what: string): Record<string, unknown> {
  try {
    return decodeMessage(message, bytes, '');
  } catch (e) {
    if (e instanceof ApiError) throw e;
    throw errors.badRequest(`${what} could not be decoded: ${(e as Error).message}`);
  }
}

/** One message → its JSON form; `path` is the JSON path of the message (for error messages). */
function decodeMessage(message: string, bytes: Uint8Array, path: string): Record<string, unknown> {
  const spec = MESSAGES[message];
  const r = protobuf.Reader.create(bytes);
  const out: Record<string, unknown> = {};
  while (r.pos < r.len) {
    const tag = r.uint32();
    const no = tag >>> 3;
    const wire = tag & 7;
    const field = spec[no];
    if (!field) {
      throw unsupported(
        `protobuf field number ${no} of message ${message}${path ? ` (at ${path})` : ''} is not one this server knows`,
      );
    }
    const [name, type] = field;
    const at = path ? `${path}.${name}` : name;
    if (type.startsWith('map<')) {
      const valueType = type.slice(type.indexOf(',') + 1, -1);
      expectWire(wire, WIRE.bytes, at);
      const entry = protobuf.Reader.create(r.bytes());
      let key = '';
      let value: unknown = valueType === 'bytes' ? '' : valueType === 'string' ? '' : undefined;
      while (entry.pos < entry.len) {
        const t = entry.uint32();
        if (t >>> 3 === 1 && (t & 7) === WIRE.bytes) key = entry.string();
        else if (t >>> 3 === 2) value = readValue(entry, valueType, t & 7, `${at}[${JSON.stringify(key)}]`);
        else throw errors.badRequest(`protobuf map entry at ${at} has an unexpected field ${t >>> 3}`);
      }
      if (!out[name]) out[name] = {};
      (out[name] as Record<string, unknown>)[key] = value;
    } else if (type.endsWith('[]')) {
      const item = type.slice(0, -2);
      if (!out[name]) out[name] = [];
      const list = out[name] as unknown[];
      list.push(readValue(r, item, wire, `${at}[${list.length}]`));
    } else {
      const v = readValue(r, type, wire, at);
      // Go writes non-pointer strings even when empty; its JSON (omitempty) leaves them out.
      if (v === '' && type === 'string') delete out[name];
      else if (v === undefined) delete out[name];
      else out[name] = v;
    }
  }
  return out;
}

function expectWire(wire: number, want: number, at: string): void {
  if (wire !== want) throw errors.badRequest(`protobuf field ${at} has wire type ${wire}, expected ${want}`);
}

function readValue(r: protobuf.Reader, type: string, wire: number, at: string): unknown {
  switch (type) {
    case 'string':
      expectWire(wire, WIRE.bytes, at);
      return r.string();
    case 'bytes':
      expectWire(wire, WIRE.bytes, at);
      return Buffer.from(r.bytes()).toString('base64');
    case 'bool':
      expectWire(wire, WIRE.varint, at);
      return r.bool();
    case 'int32':
      expectWire(wire, WIRE.varint, at);
      return r.int32();
    case 'int64':
      expectWire(wire, WIRE.varint, at);
      return num(r.int64());
  }
  if (SCALARS.has(type) || !MESSAGES[type]) throw new Error(`no decoder for type ${type} at ${at}`);
  expectWire(wire, WIRE.bytes, at);
  const m = decodeMessage(type, r.bytes(), at);
  if (type === 'Time') return time(m);
  if (type === 'IntOrString')
    return m.type === 1 ? ((m.strVal as string | undefined) ?? '') : ((m.intVal as number | undefined) ?? 0);
  return m;
}

function num(v: unknown): number {
  if (typeof v === 'number') return v;
  return protobuf.util.LongBits.from(v as protobuf.Long).toNumber();
}

/** metav1.Time: the zero time is marshalled as an empty message and is null (left out) in JSON. */
function time(m: Record<string, unknown>): string | undefined {
  const seconds = (m.seconds as number | undefined) ?? 0;
  const nanos = (m.nanos as number | undefined) ?? 0;
  if (!seconds && !nanos) return undefined;
  return `${new Date(seconds * 1000).toISOString().slice(0, 19)}Z`;
}
