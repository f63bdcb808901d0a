// A Service's ready endpoints per service port, from its EndpointSlices (label kubernetes.io/service-name). The
// service port's name picks the slice port, which carries the target port number.
import type { EndpointSlice, Service } from '../model.ts';
import type { EndpointAddress } from './types.ts';

export interface ServiceEndpoints {
  namespace: string;
  name: string;
  /** service port → ready endpoints (address, target port), sorted */
  ports: Record<string, EndpointAddress[]>;
}

export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';

export function buildServiceEndpoints(svc: Service, slices: EndpointSlice[]): ServiceEndpoints {
  const ports: Record<string, EndpointAddress[]> = {};
  for (const sp of svc.spec?.ports ?? []) {
    const seen = new Set<string>();
    const list: EndpointAddress[] = [];
    for (const slice of slices) {
      if (slice.addressType && slice.addressType !== 'IPv4' && slice.addressType !== 'IPv6') continue;
      const port = (slice.ports ?? []).find((p) => (p.name ?? '') === (sp.name ?? ''))?.port;
      if (port === undefined) continue;
      for (const ep of slice.endpoints ?? []) {
        const c = ep.conditions ?? {};
        if (c.ready === false || c.terminating === true) continue;
        for (const address of ep.addresses) {
          const k = `${address}:${port}`;
          if (seen.has(k)) continue;
          seen.add(k);
          list.push({ address, port });
        }
      }
    }
    list.sort((a, b) => (a.address < b.address ? -1 : a.address > b.address ? 1 : a.port - b.port));
    ports[String(sp.port)] = list;
  }
  return { namespace: svc.metadata.namespace ?? 'default', name: svc.metadata.name, ports };
}
