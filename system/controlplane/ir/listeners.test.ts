// A listener's certificateRefs against bad certificates (issue 12 "Bad input"), as the spec says
// (apis/v1/gateway_types.go ListenerReasonInvalidCertificateRef: "invalid when it refers to a nonexistent or
// unsupported resource or kind, or when the data within that resource is malformed"): garbage PEM and a key that is not
// the certificate's are InvalidCertificateRef (Envoy would refuse them: context_impl.cc "Failed to load certificate
// chain" / "Failed to load private key", so they are never sent); an expired certificate and one signed by a CA not in
// tls.crt are well-formed: Envoy loads and serves them and the client's verification fails
// (system/proxy/test/tls-passthrough.test.ts), so ResolvedRefs stays True.
import { describe, expect, it } from 'vitest';
import { selfSigned } from '../../shared/testing/certs.ts';
import type { Gateway, Secret } from '../model.ts';
import { certificateProblem, validateListeners } from './listeners.ts';

const b64 = (s: string) => Buffer.from(s).toString('base64');
const secret = (name: string, pem: { cert: string; key: string }): Secret => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name, namespace: 'infra' },
  data: { 'tls.crt': b64(pem.cert), 'tls.key': b64(pem.key) },
});

const good = selfSigned('a.example.com');
const other = selfSigned('b.example.com');
const ca = selfSigned('some-ca', { ca: true });
const secrets: Record<string, Secret> = {
  garbage: secret('garbage', { cert: 'Hello world', key: 'Hello world' }),
  mismatch: secret('mismatch', { cert: good.cert, key: other.key }),
  expired: secret('expired', selfSigned('a.example.com', { expired: true })),
  'other-ca': secret('other-ca', selfSigned('a.example.com', { issuer: ca })),
  good: secret('good', good),
};

describe('certificateRefs to bad certificates', () => {
  it('says what is wrong with each', () => {
    expect(certificateProblem(secrets.garbage)).toMatch(/^tls.crt is not a PEM certificate/);
    expect(certificateProblem(secrets.mismatch)).toBe('tls.key does not match the certificate in tls.crt');
    expect(certificateProblem(secrets.expired)).toBeUndefined();
    expect(certificateProblem(secrets['other-ca'])).toBeUndefined();
    expect(certificateProblem(secrets.good)).toBeUndefined();
  });

  it('HTTPS and TLS Terminate listeners: InvalidCertificateRef for garbage and a mismatched key, not programmed', () => {
    const names = Object.keys(secrets);
    const gw: Gateway = {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'Gateway',
      metadata: { name: 'gw', namespace: 'infra' },
      spec: {
        gatewayClassName: 'c',
        listeners: names.flatMap((n, i) => [
          {
            name: `https-${n}`,
            protocol: 'HTTPS',
            port: 443,
            hostname: `${n}.example.com`,
            tls: { certificateRefs: [{ name: n }] },
          },
          {
            name: `tls-${n}`,
            protocol: 'TLS',
            port: 8443 + i,
            tls: { mode: 'Terminate' as const, certificateRefs: [{ name: n }] },
          },
        ]),
      },
    };
    const states = validateListeners(gw, [], { grants: () => [], secret: (_ns, name) => secrets[name] });
    const got = Object.fromEntries(
      states.map((s) => [s.l.name, [s.report.resolvedRefs.reason, s.report.programmed.ok, s.usable]]),
    );
    for (const p of ['https', 'tls']) {
      expect(got[`${p}-garbage`]).toEqual(['InvalidCertificateRef', false, false]);
      expect(got[`${p}-mismatch`]).toEqual(['InvalidCertificateRef', false, false]);
      expect(got[`${p}-expired`]).toEqual(['ResolvedRefs', true, true]);
      expect(got[`${p}-other-ca`]).toEqual(['ResolvedRefs', true, true]);
      expect(got[`${p}-good`]).toEqual(['ResolvedRefs', true, true]);
    }
    expect(states.find((s) => s.l.name === 'tls-mismatch')!.report.resolvedRefs.message).toContain(
      'tls.key does not match the certificate in tls.crt',
    );
  });
});
