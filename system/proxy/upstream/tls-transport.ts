// TLS to upstream hosts (a cluster's `transport_socket` `envoy.transport_sockets.tls` UpstreamTlsContext), on
// node:tls: the SNI (`sni`; none when empty, as Envoy without auto_sni), the trusted CAs of
// `common_tls_context.validation_context.trusted_ca` (inline, or a file read when the cluster is accepted), the peer's
// subject alt names matched as Envoy's `match_typed_subject_alt_names` (source/common/tls/cert_validator/
// default_validator.cc: any SAN of the given type matching any matcher; a DNS SAN `*.example.com` matches one label,
// as Envoy's dnsNameMatch), and a client certificate (`tls_certificates`, inline). Without a validation context
// nothing is verified (Envoy's default). A failed handshake or verification closes the connection before any
// request is written and reports Envoy's transport failure reason (`TLS_error:|<packed code>:SSL routines:
// OPENSSL_internal:<REASON>:TLS_error_end`, ssl_socket.cc), which the router puts in its 503 body with flag UF; the
// cluster counts `ssl.handshake`, `ssl.connection_error`, `ssl.fail_verify_error`, `ssl.fail_verify_san`,
// `ssl.versions.*`, `ssl.ciphers.*` (docs: configuration/upstream/cluster_manager/cluster_stats "TLS statistics").
// What it cannot honour it rejects (ConfigError → the CDS update is NACKed).
import { readFileSync } from 'node:fs';
import net from 'node:net';
import tls from 'node:tls';
import { ConfigError } from '../config/errors.ts';
import type { Logger } from '../log.ts';
import type { Counter, StatsStore } from '../stats.ts';

type J = Record<string, any>;

export const UPSTREAM_TLS_CONTEXT = 'type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext';

type SanType = 'DNS' | 'URI' | 'IP_ADDRESS' | 'EMAIL';

interface SanMatcher {
  type: SanType;
  kind: 'exact' | 'prefix' | 'suffix' | 'contains';
  value: string;
  ignoreCase: boolean;
}

/** A cluster's compiled UpstreamTlsContext. */
export interface UpstreamTls {
  sni: string;
  /** PEM of the trusted CAs; undefined: the peer is not verified. */
  ca: string | undefined;
  sans: SanMatcher[];
  cert?: string;
  key?: string;
}

const CONTEXT_FIELDS = new Set(['@type', 'common_tls_context', 'sni', 'allow_renegotiation', 'max_session_keys']);
const COMMON_FIELDS = new Set(['validation_context', 'alpn_protocols', 'tls_certificates', 'tls_params']);
const VALIDATION_FIELDS = new Set(['trusted_ca', 'match_typed_subject_alt_names']);
const SAN_TYPES = new Set<SanType>(['DNS', 'URI', 'IP_ADDRESS', 'EMAIL']);

function data(ds: J | undefined, what: string): string {
  if (ds?.inline_string !== undefined) return String(ds.inline_string);
  if (ds?.inline_bytes !== undefined) return Buffer.from(String(ds.inline_bytes), 'base64').toString();
  if (ds?.filename !== undefined) {
    try {
      return readFileSync(String(ds.filename), 'utf8');
    } catch {
      throw new ConfigError(`Failed to load ${what} from ${ds.filename}`);
    }
  }
  throw new ConfigError(`${what}: only inline_string, inline_bytes and filename data sources are supported`);
}

/** The cluster's transport socket → UpstreamTls (undefined: plaintext); ConfigError for what is not supported. */
export function compileUpstreamTls(ts: J | undefined, cluster: string): UpstreamTls | undefined {
  if (!ts) return undefined;
  const type = String(ts.typed_config?.['@type'] ?? '');
  if (type.endsWith('RawBuffer')) return undefined;
  const where = `cluster ${cluster}: transport_socket ${ts.name ?? ''}`;
  if (type !== UPSTREAM_TLS_CONTEXT) throw new ConfigError(`${where}: ${type || 'an untyped config'} is not supported`);
  const ctx = ts.typed_config as J;
  for (const f of Object.keys(ctx))
    if (!CONTEXT_FIELDS.has(f)) throw new ConfigError(`${where}: UpstreamTlsContext.${f} is not supported`);
  const common = (ctx.common_tls_context ?? {}) as J;
  for (const f of Object.keys(common))
    if (!COMMON_FIELDS.has(f)) throw new ConfigError(`${where}: common_tls_context.${f} is not supported`);
  const alpn = (common.alpn_protocols ?? []) as string[];
  if (alpn.some((p) => p !== 'http/1.1'))
    throw new ConfigError(`${where}: common_tls_context.alpn_protocols: only http/1.1 is supported upstream`);
  const vc = common.validation_context as J | undefined;
  for (const f of Object.keys(vc ?? {}))
    if (!VALIDATION_FIELDS.has(f)) throw new ConfigError(`${where}: validation_context.${f} is not supported`);
  let ca: string | undefined;
  if (vc?.trusted_ca) {
    ca = data(vc.trusted_ca, 'trusted CA certificates');
    try {
      tls.createSecureContext({ ca });
      if (!/-----BEGIN CERTIFICATE-----/.test(ca)) throw new Error('no certificate');
    } catch {
      throw new ConfigError(`Failed to load trusted CA certificates from ${vc.trusted_ca.filename ?? '<inline>'}`);
    }
  }
  const sans = ((vc?.match_typed_subject_alt_names ?? []) as J[]).map((m, i) =>
    sanMatcher(m, `${where}: match_typed_subject_alt_names[${i}]`),
  );
  if (sans.length && !ca)
    throw new ConfigError(
      `${where}: SAN-based verification of peer certificates without trusted CA is insecure and not allowed`,
    );
  const certs = (common.tls_certificates ?? []) as J[];
  if (certs.length > 1)
    throw new ConfigError(`${where}: Multiple TLS certificates are not supported for client contexts`);
  const out: UpstreamTls = { sni: String(ctx.sni ?? ''), ca, sans };
  if (certs.length) {
    out.cert = data(certs[0].certificate_chain, 'certificate chain');
    out.key = data(certs[0].private_key, 'private key');
    try {
      tls.createSecureContext({ cert: out.cert, key: out.key });
    } catch (e) {
      throw new ConfigError(`Failed to load private key from <inline>, Cause: ${(e as Error).message}`);
    }
  }
  return out;
}

function sanMatcher(m: J, where: string): SanMatcher {
  const type = m.san_type as SanType;
  if (!SAN_TYPES.has(type))
    throw new ConfigError(`${where}.san_type: ${m.san_type ?? 'SAN_TYPE_UNSPECIFIED'} is not supported`);
  const sm = (m.matcher ?? {}) as J;
  const kind = (['exact', 'prefix', 'suffix', 'contains'] as const).find((k) => sm[k] !== undefined);
  if (!kind) throw new ConfigError(`${where}.matcher: only exact, prefix, suffix and contains are supported`);
  return { type, kind, value: String(sm[kind]), ignoreCase: sm.ignore_case === true };
}

/** The peer certificate's SANs of one type (Node's `subjectaltname`: `DNS:a, URI:b, IP Address:c, email:d`). */
function peerSans(cert: tls.PeerCertificate, type: SanType): string[] {
  const label = { DNS: 'DNS', URI: 'URI', IP_ADDRESS: 'IP Address', EMAIL: 'email' }[type];
  return (cert.subjectaltname ?? '')
    .split(/,\s*/)
    .filter((s) => s.startsWith(`${label}:`))
    .map((s) => s.slice(label.length + 1));
}

function matches(m: SanMatcher, san: string): boolean {
  const [a, v] = m.ignoreCase ? [san.toLowerCase(), m.value.toLowerCase()] : [san, m.value];
  // A DNS wildcard SAN (`*.example.com`) matches exactly one label (Envoy's dnsNameMatch), for exact matchers.
  if (m.type === 'DNS' && m.kind === 'exact' && a.startsWith('*.')) {
    const dot = v.indexOf('.');
    return dot > 0 && v.slice(dot) === a.slice(1);
  }
  if (m.kind === 'exact') return a === v;
  if (m.kind === 'prefix') return a.startsWith(v);
  if (m.kind === 'suffix') return a.endsWith(v);
  return a.includes(v);
}

/** Does the peer certificate carry a SAN that one of the matchers accepts? */
export function sanMatches(cert: tls.PeerCertificate, matchers: SanMatcher[]): boolean {
  return matchers.some((m) => peerSans(cert, m.type).some((san) => matches(m, san)));
}

/** A cluster's `ssl.*` stats (Envoy's client TLS context counts the same names as a listener's). */
export class UpstreamSslStats {
  readonly handshake: Counter;
  readonly connection_error: Counter;
  readonly fail_verify_error: Counter;
  readonly fail_verify_san: Counter;
  private readonly prefix: string;
  private readonly stats: StatsStore;

  constructor(cluster: string, stats: StatsStore) {
    this.prefix = `cluster.${cluster}.ssl.`;
    this.stats = stats;
    this.handshake = stats.counter(`${this.prefix}handshake`);
    this.connection_error = stats.counter(`${this.prefix}connection_error`);
    this.fail_verify_error = stats.counter(`${this.prefix}fail_verify_error`);
    this.fail_verify_san = stats.counter(`${this.prefix}fail_verify_san`);
  }

  onHandshake(c: tls.TLSSocket): void {
    this.handshake.inc();
    const version = c.getProtocol();
    if (version) this.stats.counter(`${this.prefix}versions.${version}`).inc();
    const cipher = c.getCipher()?.name;
    if (cipher) this.stats.counter(`${this.prefix}ciphers.${cipher}`).inc();
  }
}

/** BoringSSL's packed error codes (ERR_PACK(ERR_LIB_SSL, reason)) for the reasons a handshake fails with most. */
const SSL_REASONS: Record<string, number> = {
  CERTIFICATE_VERIFY_FAILED: 125,
  WRONG_VERSION_NUMBER: 247,
  SSLV3_ALERT_HANDSHAKE_FAILURE: 1040,
  SSLV3_ALERT_BAD_CERTIFICATE: 1042,
  TLSV1_ALERT_UNKNOWN_CA: 1048,
  TLSV1_ALERT_PROTOCOL_VERSION: 1070,
  TLSV1_UNRECOGNIZED_NAME: 1112,
};

/** Envoy's transport failure reason for an SSL-library failure (ssl_socket.cc drainErrorQueue). */
export function tlsError(reason: string): string {
  const code = SSL_REASONS[reason];
  return `TLS_error:|${code !== undefined ? (16 << 24) + code : 0}:SSL routines:OPENSSL_internal:${reason}:TLS_error_end`;
}

/** An error a TLS upstream connection failed with: `transportFailure` is what the router reports. */
export type TlsFailure = Error & { transportFailure: string };

/** OpenSSL's reason of a Node TLS error (`ERR_SSL_WRONG_VERSION_NUMBER` → WRONG_VERSION_NUMBER). */
function reasonOf(err: NodeJS.ErrnoException & { reason?: string }): string {
  if (err.code?.startsWith('ERR_SSL_')) return err.code.slice('ERR_SSL_'.length);
  return (err.reason ?? err.message).toUpperCase().replace(/[^A-Z0-9]+/g, '_');
}

/**
 * Opens a TLS connection to a host. It emits 'secureConnect' once the handshake and the verification passed, else
 * 'error' with a TlsFailure (a TCP connect failure comes as the socket's own error, no transportFailure).
 */
export function connectTls(
  host: { address: string; port: number },
  cfg: UpstreamTls,
  ssl: UpstreamSslStats,
  log: Logger,
  tags: Record<string, string | number>,
): tls.TLSSocket {
  let tcpUp = false;
  const opts: tls.ConnectionOptions & { noDelay: boolean } = {
    host: host.address,
    port: host.port,
    ...(cfg.sni ? { servername: cfg.sni } : net.isIP(host.address) ? {} : { servername: '' }),
    ...(cfg.ca ? { ca: cfg.ca } : {}),
    ...(cfg.cert ? { cert: cfg.cert, key: cfg.key } : {}),
    ALPNProtocols: ['http/1.1'],
    rejectUnauthorized: false,
    checkServerIdentity: () => undefined,
    noDelay: true,
  };
  const socket = tls.connect(opts);
  const fail = (transportFailure: string, detail: string) => {
    ssl.connection_error.inc();
    log.debug(`remote address:${host.address}:${host.port},${transportFailure}`, tags);
    if (detail) log.debug(detail, tags);
    socket.destroy(Object.assign(new Error(transportFailure), { transportFailure }));
  };
  socket.once('connect', () => {
    tcpUp = true;
  });
  socket.prependOnceListener('secureConnect', () => {
    if (cfg.ca && !socket.authorized) {
      ssl.fail_verify_error.inc();
      const why = String(socket.authorizationError ?? 'unknown error');
      fail(
        tlsError('CERTIFICATE_VERIFY_FAILED'),
        `verify cert failed: X509_verify_cert: certificate verification error at depth 0: ${why}`,
      );
      return;
    }
    if (cfg.sans.length && !sanMatches(socket.getPeerCertificate(), cfg.sans)) {
      ssl.fail_verify_san.inc();
      fail(tlsError('CERTIFICATE_VERIFY_FAILED'), 'verify cert failed: SAN matcher');
      return;
    }
    ssl.onHandshake(socket);
    log.debug(`handshake complete`, tags);
  });
  // A handshake that fails inside the TLS library (an alert, not TLS at all): its OpenSSL reason.
  socket.prependOnceListener('error', (err: NodeJS.ErrnoException & { transportFailure?: string }) => {
    if (!tcpUp || err.transportFailure) return;
    ssl.connection_error.inc();
    err.transportFailure =
      err.code === 'ECONNRESET'
        ? 'TLS_error:|33554536:system library:OPENSSL_internal:Connection reset by peer:TLS_error_end'
        : tlsError(reasonOf(err));
    log.debug(`remote address:${host.address}:${host.port},${err.transportFailure}`, tags);
  });
  return socket;
}
