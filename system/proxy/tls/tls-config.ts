// TLS termination on a listener (Envoy's `envoy.transport_sockets.tls` DownstreamTlsContext on its filter chains):
// the chains validated down to secure contexts (node:tls), and the chain a connection takes by its SNI as Envoy's
// filter chain matching picks it (source/common/listener_manager/filter_chain_manager_impl.cc, server_names: the
// exact name, then the longest wildcard suffix `*.b.c` before `*.c`, then the chain without server_names; no match:
// the connection is closed). What it cannot honour it rejects with Envoy's words (context_impl.cc: "Failed to load
// certificate chain from <inline>", "Failed to load private key from <inline>, Cause: ..."), and the LDS update is
// NACKed: certificates from files or SDS, other filter_chain_match fields, any DownstreamTlsContext field not read
// here. tls_params: protocol versions, cipher suites and curves, as Envoy's. ALPN: the chain's alpn_protocols, h2 and
// http/1.1 (listener/http-codec.ts picks the codec by it).
// Client certificates (source/common/tls/cert_validator/default_validator.cc): `validation_context.trusted_ca` (an
// inline PEM bundle) makes the chain ask for one and verify it against those CAs; `require_client_certificate` fails
// the handshake without one; `trust_chain_verification: ACCEPT_UNTRUSTED` accepts one that does not verify. Other
// validation_context fields (SAN/hash/SPKI matching, CRLs) are refused.
import tls from 'node:tls';
import { ConfigError } from '../config/errors.ts';

type J = Record<string, any>;

export const DOWNSTREAM_TLS_CONTEXT = 'envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext';

/** One filter chain that terminates TLS. */
export interface TlsChain {
  name: string;
  /** SNI names it matches (exact or `*.suffix`); empty: the default chain. */
  serverNames: string[];
  context: tls.SecureContext;
  /** ALPN protocols offered, in preference order (common_tls_context.alpn_protocols; empty: no ALPN). */
  alpn: string[];
  /** What the context was made of, for the server's default context (clients without SNI). */
  options: tls.SecureContextOptions;
  /** Its connection manager's RDS route configuration, when the listener's chains name different ones. */
  routeConfigName?: string;
  /** validation_context: client certificates asked for and verified against `options.ca` (client-cert.ts). */
  clientCert?: { require: boolean; acceptUntrusted: boolean };
}

/** A DataSource's bytes: inline_bytes (base64 in proto JSON) or inline_string; files and env vars are refused. */
function dataSource(ds: J | undefined, what: string): Buffer {
  if (ds?.inline_bytes !== undefined) return Buffer.from(String(ds.inline_bytes), 'base64');
  if (ds?.inline_string !== undefined) return Buffer.from(String(ds.inline_string));
  if (ds?.filename !== undefined || ds?.environment_variable !== undefined)
    throw new ConfigError(`${what}: only inline_bytes and inline_string data sources are supported`);
  throw new ConfigError(`${what}: a data source is required`);
}

/** A filter chain's DownstreamTlsContext → a secure context; ConfigError (Envoy's text) when it cannot be made. */
export function compileTlsChain(chain: J, listener: string, index: number): TlsChain {
  const where = `listener ${listener}: filter_chains[${index}]`;
  const ctx = chain.transport_socket?.typed_config ?? {};
  const common = (ctx.common_tls_context ?? {}) as J;
  for (const f of Object.keys(ctx)) {
    if (!DOWNSTREAM_FIELDS.has(f)) throw new ConfigError(`${where}: DownstreamTlsContext.${f} is not supported`);
  }
  for (const f of Object.keys(common)) {
    if (!COMMON_FIELDS.has(f)) throw new ConfigError(`${where}: common_tls_context.${f} is not supported`);
  }
  for (const f of [
    'tls_certificate_sds_secret_configs',
    'validation_context_sds_secret_config',
    'tls_certificate_provider_instance',
  ]) {
    if (common[f])
      throw new ConfigError(`${where}: common_tls_context.${f} is not supported (certificates inline only)`);
  }
  const clientCert = clientValidation(ctx, common, where);
  const alpn = (common.alpn_protocols ?? []) as string[];
  if (alpn.some((p) => p !== 'http/1.1' && p !== 'h2'))
    throw new ConfigError(`${where}: alpn_protocols ${alpn.join(', ')}: only h2 and http/1.1 are supported`);
  const certs = (common.tls_certificates ?? []) as J[];
  if (!certs.length) throw new ConfigError(`${where}: no certificates (common_tls_context.tls_certificates)`);
  const options: tls.SecureContextOptions = { cert: [], key: [], ...tlsParams(common.tls_params ?? {}, where) };
  if (clientCert)
    options.ca = dataSource(common.validation_context.trusted_ca, `${where}: validation_context.trusted_ca`);
  for (const [i, c] of certs.entries()) {
    (options.cert as Buffer[]).push(
      dataSource(c.certificate_chain, `${where}: tls_certificates[${i}].certificate_chain`),
    );
    (options.key as Buffer[]).push(dataSource(c.private_key, `${where}: tls_certificates[${i}].private_key`));
  }
  return {
    name: String(chain.name ?? ''),
    serverNames: (chain.filter_chain_match?.server_names ?? []) as string[],
    context: secureContext(options),
    alpn,
    options,
    ...(clientCert ? { clientCert } : {}),
  };
}

const VALIDATION_FIELDS = new Set(['trusted_ca', 'trust_chain_verification']);

/** require_client_certificate and validation_context, as far as they are honoured (see the header). */
function clientValidation(ctx: J, common: J, where: string): TlsChain['clientCert'] {
  const require = ctx.require_client_certificate === true || ctx.require_client_certificate?.value === true;
  const vc = common.validation_context as J | undefined;
  if (!vc) {
    if (require) throw new ConfigError(`${where}: require_client_certificate needs validation_context.trusted_ca`);
    return undefined;
  }
  for (const f of Object.keys(vc)) {
    if (!VALIDATION_FIELDS.has(f)) throw new ConfigError(`${where}: validation_context.${f} is not supported`);
  }
  if (!vc.trusted_ca) throw new ConfigError(`${where}: validation_context.trusted_ca is required`);
  const mode = vc.trust_chain_verification ?? 'VERIFY_TRUST_CHAIN';
  if (mode !== 'VERIFY_TRUST_CHAIN' && mode !== 'ACCEPT_UNTRUSTED')
    throw new ConfigError(`${where}: validation_context.trust_chain_verification ${mode} is not supported`);
  return { require, acceptUntrusted: mode === 'ACCEPT_UNTRUSTED' };
}

/** The DownstreamTlsContext and CommonTlsContext fields read here (the others are refused, not ignored). */
const DOWNSTREAM_FIELDS = new Set(['@type', 'common_tls_context', 'require_client_certificate']);
const COMMON_FIELDS = new Set([
  'tls_certificates',
  'alpn_protocols',
  'tls_params',
  'validation_context',
  'tls_certificate_sds_secret_configs',
  'validation_context_sds_secret_config',
  'tls_certificate_provider_instance',
]);

const TLS_VERSION: Record<string, tls.SecureVersion | undefined> = {
  TLSv1_0: 'TLSv1',
  TLSv1_1: 'TLSv1.1',
  TLSv1_2: 'TLSv1.2',
  TLSv1_3: 'TLSv1.3',
};

/** TlsParameters: protocol versions (TLS_AUTO: Envoy's defaults, 1.2 to 1.3 downstream), cipher suites, curves. */
function tlsParams(p: J, where: string): tls.SecureContextOptions {
  const out: tls.SecureContextOptions = { minVersion: 'TLSv1.2', maxVersion: 'TLSv1.3' };
  for (const [field, key] of [
    ['tls_minimum_protocol_version', 'minVersion'],
    ['tls_maximum_protocol_version', 'maxVersion'],
  ] as const) {
    const v = p[field];
    if (v === undefined || v === 'TLS_AUTO') continue;
    const version = TLS_VERSION[String(v)];
    if (!version) throw new ConfigError(`${where}: tls_params.${field} ${v} is not supported`);
    out[key] = version;
  }
  if (p.cipher_suites?.length) out.ciphers = (p.cipher_suites as string[]).join(':');
  if (p.ecdh_curves?.length) out.ecdhCurve = (p.ecdh_curves as string[]).join(':');
  for (const f of Object.keys(p)) {
    if (!['tls_minimum_protocol_version', 'tls_maximum_protocol_version', 'cipher_suites', 'ecdh_curves'].includes(f))
      throw new ConfigError(`${where}: tls_params.${f} is not supported`);
  }
  return out;
}

/** tls.createSecureContext with Envoy's messages: the certificate chain first, then the key (and its match). */
function secureContext(options: tls.SecureContextOptions): tls.SecureContext {
  try {
    tls.createSecureContext({ cert: options.cert });
  } catch {
    throw new ConfigError('Failed to load certificate chain from <inline>');
  }
  try {
    tls.createSecureContext({ cert: options.cert, key: options.key });
  } catch (err) {
    throw new ConfigError(`Failed to load private key from <inline>, Cause: ${(err as Error).message}`);
  }
  if (options.ca !== undefined) {
    // Envoy (default_validator.cc): a trusted_ca with no certificate in it is refused.
    const pem = String(options.ca);
    let loaded = pem.includes('-----BEGIN CERTIFICATE-----');
    try {
      tls.createSecureContext({ ca: options.ca });
    } catch {
      loaded = false;
    }
    if (!loaded) throw new ConfigError('Failed to load trusted CA certificates from <inline>');
  }
  try {
    return tls.createSecureContext(options);
  } catch (err) {
    const what = options.ciphers ? `cipher suites ${options.ciphers}` : `ECDH curves ${options.ecdhCurve}`;
    throw new ConfigError(`Failed to initialize ${what} (${(err as Error).message})`);
  }
}

/** The chain for a server name, as Envoy matches server_names: exact, longest wildcard suffix, then the default. */
export function pickTlsChain<C extends { serverNames: string[] }>(
  chains: C[],
  serverName: string | undefined,
): C | undefined {
  const name = (serverName ?? '').toLowerCase();
  if (name) {
    const exact = chains.find((c) => c.serverNames.some((n) => n.toLowerCase() === name));
    if (exact) return exact;
    for (let dot = name.indexOf('.'); dot >= 0; dot = name.indexOf('.', dot + 1)) {
      const wildcard = `*${name.slice(dot)}`;
      const hit = chains.find((c) => c.serverNames.some((n) => n.toLowerCase() === wildcard));
      if (hit) return hit;
    }
  }
  return chains.find((c) => c.serverNames.length === 0);
}

/** The filter_chain_match fields a TLS chain may carry: server_names, and transport_protocol "tls". */
export function checkTlsChainMatch(chain: J, listener: string, index: number): void {
  for (const [k, v] of Object.entries((chain.filter_chain_match ?? {}) as J)) {
    if (k === 'server_names' || (k === 'transport_protocol' && v === 'tls')) continue;
    throw new ConfigError(`listener ${listener}: filter_chains[${index}].filter_chain_match.${k} is not supported`);
  }
}

/** Envoy's failure reason text (ssl_socket.cc drainErrorQueue): `TLS_error:|<code>:<library>:<reason>:TLS_error_end`. */
export function tlsError(err: NodeJS.ErrnoException & { library?: string; reason?: string }): string {
  const reason = (err.reason ?? err.message).toUpperCase().replace(/ /g, '_');
  return `TLS_error:|${err.code ?? 'ERR_SSL'}:${err.library ?? 'SSL routines'}:OPENSSL_internal:${reason}:TLS_error_end`;
}
