// GET /certs: the certificates of the TLS contexts the listeners serve, as Envoy's admin prints them
// (envoy.admin.v3.Certificates: per context `ca_cert` and `cert_chain`, each certificate's path — `<inline>` for
// inline data, as Envoy's TlsCertificateConfigImpl names it —, serial number in lower-case hex, subject alt names,
// days until expiration, valid_from and expiration_time; docs: operations/admin#get--certs).
import { X509Certificate } from 'node:crypto';
import type { ActiveListener } from '../listener/active-listener.ts';

type J = Record<string, unknown>;

/** One certificate's CertificateDetails. */
function details(pem: Buffer, now: number): J | undefined {
  let c: X509Certificate;
  try {
    c = new X509Certificate(pem);
  } catch {
    return undefined;
  }
  const sans = (c.subjectAltName ?? '')
    .split(', ')
    .filter(Boolean)
    .flatMap((s): J[] => {
      if (s.startsWith('DNS:')) return [{ dns: s.slice(4) }];
      if (s.startsWith('URI:')) return [{ uri: s.slice(4) }];
      if (s.startsWith('IP Address:')) return [{ ip_address: s.slice(11) }];
      return [];
    });
  const to = new Date(c.validTo).getTime();
  return {
    path: '<inline>',
    serial_number: c.serialNumber.toLowerCase(),
    subject_alt_names: sans,
    days_until_expiration: String(Math.max(0, Math.floor((to - now) / 86_400_000))),
    valid_from: new Date(c.validFrom).toISOString().replace('.000Z', 'Z'),
    expiration_time: new Date(to).toISOString().replace('.000Z', 'Z'),
  };
}

/** The /certs body for the listeners serving now: one entry per TLS filter chain. */
export function certsDump(listeners: ActiveListener[], now = Date.now()): J {
  const certificates: J[] = [];
  for (const l of listeners) {
    for (const chain of l.spec.tls ?? []) {
      const pems = ([] as Buffer[]).concat((chain.options.cert as Buffer[] | undefined) ?? []);
      const chainDetails = pems.map((p) => details(p, now)).filter((d): d is J => !!d);
      certificates.push({ ca_cert: [], cert_chain: chainDetails });
    }
  }
  return { certificates };
}
