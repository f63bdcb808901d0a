// The protobuf form of `/openapi/v2` (`Accept: application/com.github.proto-openapi.spec.v2@v1.0+protobuf`), the
// only form kubectl 1.32 reads: client-go's discovery OpenAPISchema() proto.Unmarshal()s the body into gnostic's
// openapi_v2.Document. Field numbers are those of gnostic's openapiv2/OpenAPIv2.proto (github.com/google/gnostic,
// Apache-2.0); only the messages a Kubernetes document uses are written (Document, Info, Paths, PathItem,
// Operation, parameters, Responses, Definitions, Schema), with protobufjs' Writer. No npm package carries gnostic's
// messages, hence this encoder. Vendor extensions and `default`/`enum`/`example` values are `Any{yaml}`, written as
// JSON (a YAML subset), which kube-openapi's parser reads with yaml.Unmarshal.
import protobuf from 'protobufjs';
import type { Schema } from './openapi-schemas.ts';

type W = protobuf.Writer;
const LEN = 2;
const VARINT = 0;
const I64 = 1;

const str = (w: W, f: number, v: unknown) => {
  if (typeof v === 'string' && v !== '') w.uint32((f << 3) | LEN).string(v);
};
const bool = (w: W, f: number, v: unknown) => {
  if (v === true) w.uint32((f << 3) | VARINT).bool(true);
};
const int = (w: W, f: number, v: unknown) => {
  if (typeof v === 'number') w.uint32((f << 3) | VARINT).int64(v);
};
const dbl = (w: W, f: number, v: unknown) => {
  if (typeof v === 'number') w.uint32((f << 3) | I64).double(v);
};
const msg = (w: W, f: number, body: (w: W) => void) => {
  w.uint32((f << 3) | LEN).fork();
  body(w);
  w.ldelim();
};
/** Any{yaml = 2}. */
const any = (w: W, f: number, v: unknown) => msg(w, f, (a) => str(a, 2, JSON.stringify(v)));
/** repeated NamedAny (name = 1, value = 2) of the object's `x-` keys. */
const vendor = (w: W, f: number, o: Record<string, unknown>) => {
  for (const [k, v] of Object.entries(o))
    if (k.startsWith('x-'))
      msg(w, f, (n) => {
        str(n, 1, k);
        any(n, 2, v);
      });
};

/** Any{yaml} of a value that is set. */
const anyIfSet = (w: W, f: number, v: unknown) => {
  if (v !== undefined) any(w, f, v);
};
/** A repeated field: each element written as `one` writes it. */
const each = (one: (w: W, f: number, v: unknown) => void) => (w: W, f: number, v: unknown) => {
  for (const x of (v as unknown[] | undefined) ?? []) one(w, f, x);
};

/** Schema's fields 1–20, in gnostic's order: field number, how it is written, the JSON Schema keyword it holds. */
const SCHEMA_FIELDS: [number, (w: W, f: number, v: unknown) => void, keyof Schema][] = [
  [1, str, '$ref'],
  [2, str, 'format'],
  [3, str, 'title'],
  [4, str, 'description'],
  [5, anyIfSet, 'default'],
  [6, dbl, 'multipleOf'],
  [7, dbl, 'maximum'],
  [8, bool, 'exclusiveMaximum'],
  [9, dbl, 'minimum'],
  [10, bool, 'exclusiveMinimum'],
  [11, int, 'maxLength'],
  [12, int, 'minLength'],
  [13, str, 'pattern'],
  [14, int, 'maxItems'],
  [15, int, 'minItems'],
  [16, bool, 'uniqueItems'],
  [17, int, 'maxProperties'],
  [18, int, 'minProperties'],
  [19, each(str), 'required'],
  [20, each(any), 'enum'],
];

function schema(w: W, s: Schema): void {
  for (const [f, write, key] of SCHEMA_FIELDS) write(w, f, s[key]);
  const ap = s.additionalProperties;
  if (typeof ap === 'boolean') msg(w, 21, (a) => a.uint32((2 << 3) | VARINT).bool(ap));
  else if (ap && typeof ap === 'object') msg(w, 21, (a) => msg(a, 1, (x) => schema(x, ap)));
  if (s.type) msg(w, 22, (t) => str(t, 1, s.type));
  if (s.items && typeof s.items === 'object') msg(w, 23, (i) => msg(i, 1, (x) => schema(x, s.items)));
  for (const a of s.allOf ?? []) msg(w, 24, (x) => schema(x, a));
  if (s.properties) msg(w, 25, (p) => namedSchemas(p, s.properties));
  bool(w, 27, s.readOnly);
  anyIfSet(w, 30, s.example);
  vendor(w, 31, s);
}

/** repeated NamedSchema (name = 1, value = 2) as field 1: Properties and Definitions alike. */
function namedSchemas(w: W, defs: Record<string, Schema>): void {
  for (const [name, s] of Object.entries(defs))
    msg(w, 1, (n) => {
      str(n, 1, name);
      msg(n, 2, (x) => schema(x, s));
    });
}

function parameter(w: W, p: any): void {
  // ParametersItem.parameter = 1 → Parameter: body_parameter = 1 | non_body_parameter = 2.
  msg(w, 1, (pi) => {
    if (p.in === 'body')
      msg(pi, 1, (b) => {
        str(b, 2, p.name);
        str(b, 3, p.in);
        bool(b, 4, p.required);
        msg(b, 5, (x) => schema(x, p.schema));
      });
    else
      msg(pi, 2, (nb) => {
        // NonBodyParameter: query_parameter_sub_schema = 3, path_parameter_sub_schema = 4 (their numbering differs).
        const query = p.in === 'query';
        msg(nb, query ? 3 : 4, (q) => {
          bool(q, 1, p.required);
          str(q, 2, p.in);
          str(q, 3, p.description);
          str(q, 4, p.name);
          str(q, query ? 6 : 5, p.type);
          bool(q, query ? 20 : 19, p.uniqueItems);
        });
      });
  });
}

function operation(w: W, op: any): void {
  str(w, 5, op.operationId);
  for (const p of op.produces ?? []) str(w, 6, p);
  for (const c of op.consumes ?? []) str(w, 7, c);
  for (const p of op.parameters ?? []) msg(w, 8, (x) => parameter(x, p));
  msg(w, 9, (rs) => {
    for (const [code, r] of Object.entries<any>(op.responses ?? {}))
      msg(rs, 1, (n) => {
        str(n, 1, code);
        msg(n, 2, (rv) =>
          msg(rv, 1, (resp) => {
            str(resp, 1, r.description);
            if (r.schema) msg(resp, 2, (si) => msg(si, 1, (x) => schema(x, r.schema)));
          }),
        );
      });
  });
  for (const s of op.schemes ?? []) str(w, 10, s);
  vendor(w, 13, op);
}

const METHODS: [string, number][] = [
  ['get', 2],
  ['put', 3],
  ['post', 4],
  ['delete', 5],
  ['patch', 8],
];

/** gnostic openapi_v2.Document bytes of a Swagger 2.0 document. */
export function encodeSwagger(doc: Schema): Uint8Array {
  const w = protobuf.Writer.create();
  str(w, 1, doc.swagger);
  msg(w, 2, (i) => {
    str(i, 1, doc.info?.title);
    str(i, 2, doc.info?.version);
  });
  msg(w, 8, (ps) => {
    for (const [path, item] of Object.entries<any>(doc.paths ?? {}))
      msg(ps, 2, (n) => {
        str(n, 1, path);
        msg(n, 2, (pi) => {
          for (const [m, f] of METHODS) if (item[m]) msg(pi, f, (x) => operation(x, item[m]));
          for (const p of item.parameters ?? []) msg(pi, 9, (x) => parameter(x, p));
        });
      });
  });
  msg(w, 9, (d) => namedSchemas(d, doc.definitions ?? {}));
  return w.finish();
}
