// A Gateway's spec.addresses: the type rule (IPAddress only) and the one address requested from the load balancer
// (the Programmed condition the status builder then derives from the LoadBalancer Service: status/build.test.ts).
import { describe, expect, it } from 'vitest';
import type { Gateway } from '../model.ts';
import { staticAddresses } from './static-addresses.ts';

const gw = (addresses: { type?: string; value?: string }[]): Gateway => ({
  apiVersion: 'gateway.networking.k8s.io/v1',
  kind: 'Gateway',
  metadata: { name: 'g', namespace: 'n' },
  spec: { gatewayClassName: 'gwvendor', listeners: [], addresses },
});

describe('static addresses', () => {
  it('supports IPAddress (the default type) only, naming the field of any other', () => {
    expect(staticAddresses(gw([{ type: 'test/fake-invalid-type', value: 'x' }])).unsupported).toMatch(
      /^spec\.addresses\[0\]\.type: test\/fake-invalid-type is not supported \(supported: IPAddress\)/,
    );
    expect(staticAddresses(gw([{ value: '10.0.0.1' }, { type: 'Hostname', value: 'a.example' }])).unsupported).toMatch(
      /spec\.addresses\[1\]\.type: Hostname/,
    );
  });

  it('requests one address; asks for none without a value; refuses more than one', () => {
    expect(staticAddresses(gw([{ type: 'IPAddress', value: '127.192.250.250' }]))).toEqual({
      requestedIp: '127.192.250.250',
    });
    expect(staticAddresses(gw([{ type: 'IPAddress' }]))).toEqual({});
    expect(staticAddresses(gw([{ value: '192.0.2.1' }, { value: '127.192.250.250' }])).notUsable).toMatch(
      /asks for 2 addresses .*keep one/,
    );
  });
});
