// A Gateway's spec.addresses: the type rule (IPAddress only), the one address requested from the load balancer, and
// the Programmed condition the status builder derives from what the LoadBalancer Service then says (status/build.ts).
import { describe, expect, it } from 'vitest';
import type { Gateway, Service } from '../model.ts';
import { gatewayStatus } from '../status/build.ts';
import type { GatewayReports } from './gateway.ts';
import { staticAddresses } from './static-addresses.ts';
import { ok } from './types.ts';

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

  it('is Programmed only with the requested address; AddressNotUsable when the load balancer refused it', () => {
    const reports = {
      gateway: { kind: 'Gateway', namespace: 'n', name: 'g' },
      generation: 1,
      accepted: ok('Accepted', 'gateway accepted'),
      listeners: [],
      listenerPolicies: {},
      backendTlsPolicies: {},
      backendConfigPolicies: {},
      routes: {},
      l4Routes: {},
      listenerSets: {},
      attachedListenerSets: 0,
      policies: {},
      addresses: { requestedIp: '192.0.2.1' },
    } as GatewayReports;
    const svc = (status: Service['status']): Service =>
      ({
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'g' },
        spec: { type: 'LoadBalancer' },
        status,
      }) as Service;
    const deployment = { status: { readyReplicas: 1 } } as any;
    const programmed = (s: Service) => gatewayStatus(reports, { service: s, deployment }).conditions[1];
    const refused = svc({
      loadBalancer: {},
      conditions: [
        {
          type: 'AddressesAllocated',
          status: 'False',
          reason: 'AddressNotUsable',
          message: "192.0.2.1 is outside the lab's load balancer range 127.192.0.0/16",
          lastTransitionTime: '2026-11-25T00:00:00Z',
        },
      ],
    });
    expect(programmed(refused)).toMatchObject({ status: 'False', reason: 'AddressNotUsable' });
    expect(programmed(refused).message).toContain('outside the lab');
    expect(programmed(svc({}))).toMatchObject({ status: 'False', reason: 'AddressNotAssigned' });
    const given = svc({ loadBalancer: { ingress: [{ ip: '192.0.2.1' }] } });
    expect(programmed(given)).toMatchObject({ status: 'True', reason: 'Programmed' });
    expect(gatewayStatus(reports, { service: given, deployment }).addresses).toEqual([
      { type: 'IPAddress', value: '192.0.2.1' },
    ]);
  });
});
