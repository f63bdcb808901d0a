// A TLS listener's `ssl.*` stats (Envoy's TLS context counters), shared by HTTPS listeners (active-listener.ts) and
// TLS terminated before tcp_proxy (network/tls-inspector.ts).
import type tls from 'node:tls';
import type { Counter, StatsStore } from '../stats.ts';

/**
 * A TLS listener's `<listener prefix>ssl.*` stats, as Envoy's TLS context counts them (source/common/tls/
 * context_impl.cc, docs configuration/listeners/stats "TLS statistics"): handshake, connection_error (a handshake
 * that failed, e.g. no filter chain for the SNI), no_certificate (a handshake without a client certificate),
 * fail_verify_no_cert and fail_verify_error (client certificate validation, tls/client-cert.ts), and per
 * handshake ssl.versions.<TLS version> and ssl.ciphers.<cipher>.
 */
export class SslStats {
  readonly handshake: Counter;
  readonly connection_error: Counter;
  readonly no_certificate: Counter;
  /** Client certificates (tls/client-cert.ts): required and missing; not chaining to the trusted CAs. */
  readonly fail_verify_no_cert: Counter;
  readonly fail_verify_error: Counter;
  private readonly prefix: string;
  private readonly stats: StatsStore;

  constructor(prefix: string, stats: StatsStore) {
    this.prefix = `${prefix}ssl.`;
    this.stats = stats;
    this.handshake = stats.counter(`${this.prefix}handshake`);
    this.connection_error = stats.counter(`${this.prefix}connection_error`);
    this.no_certificate = stats.counter(`${this.prefix}no_certificate`);
    this.fail_verify_no_cert = stats.counter(`${this.prefix}fail_verify_no_cert`);
    this.fail_verify_error = stats.counter(`${this.prefix}fail_verify_error`);
  }

  onHandshake(c: tls.TLSSocket): void {
    this.handshake.inc();
    const peer = c.getPeerCertificate();
    if (!peer || Object.keys(peer).length === 0) this.no_certificate.inc();
    const version = c.getProtocol();
    if (version) this.stats.counter(`${this.prefix}versions.${version}`).inc();
    const cipher = c.getCipher()?.name;
    if (cipher) this.stats.counter(`${this.prefix}ciphers.${cipher}`).inc();
  }
}
