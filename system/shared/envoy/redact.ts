// Private keys out of dumps, as Envoy's admin config_dump shows them: MessageUtil::redact replaces the data of every
// field marked `(udpa.annotations.sensitive)` (DataSource private_key, session ticket keys, ...) with "[redacted]",
// so a `bytes` field reads base64 "W3JlZGFjdGVkXQ==" and a string "[redacted]" (envoy/source/common/protobuf/utility.cc,
// envoy/extensions/transport_sockets/tls/v3/common.proto TlsCertificate.private_key). The control plane applies it
// to its dumps (/snapshots/krt, /snapshots/xds) and its IR (`privateKey`), the proxy to /config_dump.
const REDACTED = '[redacted]';
const REDACTED_BYTES = Buffer.from(REDACTED).toString('base64');

/** Fields whose value is a secret DataSource (Envoy protos) or secret text (the control plane's IR). */
const SENSITIVE_SOURCES = new Set(['private_key', 'password', 'session_ticket_keys']);

/** A deep copy of `v` with every sensitive value replaced; `v` itself is not changed (shared when nothing is). */
export function redactSecrets<T>(v: T): T {
  return redact(v) as T;
}

function redact(v: unknown): unknown {
  if (Array.isArray(v)) {
    let changed = false;
    const out = v.map((x) => {
      const r = redact(x);
      if (r !== x) changed = true;
      return r;
    });
    return changed ? out : v;
  }
  if (!v || typeof v !== 'object') return v;
  let out: Record<string, unknown> | undefined;
  for (const [k, x] of Object.entries(v)) {
    let r: unknown;
    if (SENSITIVE_SOURCES.has(k) && x && typeof x === 'object' && !Array.isArray(x)) r = redactDataSource(x);
    else if (k === 'privateKey' && typeof x === 'string') r = REDACTED;
    else r = redact(x);
    if (r !== x) {
      out ??= { ...(v as Record<string, unknown>) };
      out[k] = r;
    }
  }
  return out ?? v;
}

/** A DataSource (inline_bytes, inline_string; a filename or env var name is not secret) with its data redacted. */
function redactDataSource(ds: object): unknown {
  const d = ds as Record<string, unknown>;
  if ('inline_bytes' in d) return { ...d, inline_bytes: REDACTED_BYTES };
  if ('inline_string' in d) return { ...d, inline_string: REDACTED };
  return ds;
}
