// A Gateway's spec.addresses (Gateway API v1.6.1 GatewaySpecAddress; conformance GatewayStaticAddresses and
// GatewayOptionalAddressValue), read once for the status and the deployer: the one rule of which addresses gwlab can
// ask its proxies' LoadBalancer Service for.
//   - Type IPAddress (the default) is supported; any other type (Hostname, a domain-prefixed one) makes the Gateway
//     Accepted=False UnsupportedAddress, as the API says for "an address type that the implementation doesn't support".
//   - An IPAddress with a value is requested with the Service's `spec.loadBalancerIP`, the field cloud and bare-metal
//     load balancers (and the embedded cluster's, lab/embedded/controllers/loadbalancer.ts) honour: one address per
//     Service, so more than one requested value is AddressNotUsable. Whether the load balancer could give the one
//     requested is the Service's to say (status/build.ts reads it back).
//   - An IPAddress without a value asks for an address of that type, any: what the load balancer assigns anyway.
import type { Gateway } from '../model.ts';

export const SUPPORTED_ADDRESS_TYPES = ['IPAddress'] as const;

export interface StaticAddresses {
  /** Why the Gateway is not accepted: an address type it cannot serve. */
  unsupported?: string;
  /** The one IP to request from the load balancer. */
  requestedIp?: string;
  /** Why the addresses asked for cannot be served (Programmed=False AddressNotUsable). */
  notUsable?: string;
}

export function staticAddresses(gw: Gateway): StaticAddresses {
  const addresses = gw.spec?.addresses ?? [];
  for (const [i, a] of addresses.entries()) {
    const type = a.type ?? 'IPAddress';
    if (!(SUPPORTED_ADDRESS_TYPES as readonly string[]).includes(type)) {
      return {
        unsupported: `spec.addresses[${i}].type: ${type} is not supported (supported: ${SUPPORTED_ADDRESS_TYPES.join(', ')}); remove the address or use type IPAddress`,
      };
    }
  }
  const ips = addresses.map((a) => a.value).filter((v): v is string => !!v);
  if (ips.length > 1) {
    return {
      notUsable: `spec.addresses asks for ${ips.length} addresses (${ips.join(', ')}); the Gateway's LoadBalancer Service takes one (spec.loadBalancerIP): keep one`,
    };
  }
  return ips.length ? { requestedIp: ips[0] } : {};
}
