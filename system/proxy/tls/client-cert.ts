// Client certificates on a TLS filter chain (DownstreamTlsContext validation_context / require_client_certificate,
// compiled in tls-config.ts) with node:tls, as Envoy's DefaultCertValidator treats them
// (source/common/tls/cert_validator/default_validator.cc, docs configuration/listeners/stats "TLS statistics"):
// - a chain with a validation_context asks the client for a certificate (OpenSSL SSL_VERIFY_PEER); with
//   require_client_certificate a handshake without one fails (SSL_VERIFY_FAIL_IF_NO_PEER_CERT: the client gets the
//   certificate_required alert), counted in `ssl.fail_verify_no_cert`;
// - a certificate that does not chain to trusted_ca is refused (`ssl.fail_verify_error`, the connection closed)
//   unless trust_chain_verification is ACCEPT_UNTRUSTED (counted, then accepted).
// Node's TLS server sets the verify mode per server, not per SNI context: the SNI callback sets it on the connection
// for the chain it picked (the TLSSocket's native handle's setVerifyMode, what tls.Server itself calls), clients
// without SNI get the default chain's through the server's requestCert. Node verifies the chain during the handshake
// but only reports the result (its verify callback accepts everything): the result is read once the handshake is
// done (the native handle's verifyError, what tls.Server itself reads for `authorized`), so an untrusted certificate
// closes the connection right after the handshake rather than with an alert inside it; the client's request fails
// either way.
import type tls from 'node:tls';
import type { TlsChain } from './tls-config.ts';

interface NativeTls {
  setVerifyMode(requestCert: boolean, rejectUnauthorized: boolean): void;
  verifyError(): (Error & { code?: string }) | null | undefined;
}

const handleOf = (c: tls.TLSSocket) => (c as unknown as { _handle?: NativeTls })._handle;

/** The chain a connection's SNI picked (set by the SNI callback; clients without SNI: none). */
const CHAIN = Symbol('gwlabTlsChain');
type WithChain = tls.TLSSocket & { [CHAIN]?: TlsChain };

/** In the SNI callback: the connection asks for a client certificate as its chain says (and remembers the chain). */
export function requestClientCert(c: tls.TLSSocket, chain: TlsChain): void {
  (c as WithChain)[CHAIN] = chain;
  handleOf(c)?.setVerifyMode(!!chain.clientCert, !!chain.clientCert?.require);
}

/** The chain picked for this connection by its SNI, else `fallback` (no SNI: the server's default context). */
export function chainOf(c: tls.TLSSocket, fallback: TlsChain | undefined): TlsChain | undefined {
  return (c as WithChain)[CHAIN] ?? fallback;
}

export type ClientCertFailure = 'fail_verify_no_cert' | 'fail_verify_error';

/**
 * After the handshake: the failure that closes the connection, if any, and whether an untrusted certificate was let
 * through (ACCEPT_UNTRUSTED: Envoy counts it in fail_verify_error too).
 */
export interface ClientCertCheck {
  failure?: ClientCertFailure;
  untrusted?: boolean;
  /** OpenSSL's verify error (e.g. UNABLE_TO_VERIFY_LEAF_SIGNATURE), or "no certificate". */
  detail?: string;
}

export function checkClientCert(c: tls.TLSSocket, chain: TlsChain | undefined): ClientCertCheck {
  const v = chain?.clientCert;
  if (!v) return {};
  if (!c.getPeerX509Certificate()) return v.require ? { failure: 'fail_verify_no_cert', detail: 'no certificate' } : {};
  const err = handleOf(c)?.verifyError();
  if (!err) return {};
  const detail = err.code ?? err.message;
  return v.acceptUntrusted ? { untrusted: true, detail } : { failure: 'fail_verify_error', detail };
}

/** A handshake that failed for want of a client certificate (OpenSSL's "peer did not return a certificate"). */
export const isNoClientCertError = (err: Error & { code?: string }): boolean =>
  err.code === 'ERR_SSL_PEER_DID_NOT_RETURN_A_CERTIFICATE';

/** A post-handshake refusal as the [connection] debug line tells it (Envoy's CERTIFICATE_VERIFY_FAILED). */
export function clientCertError(check: ClientCertCheck): Error & { code: string; library: string; reason: string } {
  const reason =
    check.failure === 'fail_verify_no_cert' ? 'PEER_DID_NOT_RETURN_A_CERTIFICATE' : 'CERTIFICATE_VERIFY_FAILED';
  return Object.assign(new Error(`${reason} (${check.detail})`), {
    code: '268435581',
    library: 'SSL routines',
    reason,
  });
}
