// The status builder (build.ts) on a Gateway that asked for a static address (spec.addresses, ir/static-addresses.ts):
// Programmed only once the LoadBalancer Service holds the requested address; AddressNotUsable with the load
// balancer's own message when it refused it, AddressNotAssigned while it has none (Gateway API GatewayConditionReason).
import { describe, expect, it } from 'vitest';
import type { GatewayReports } from '../ir/gateway.ts';
import { ok } from '../ir/types.ts';
import type { Service } from '../model.ts';
import { gatewayStatus } from './build.ts';

describe('a Gateway with a static address', () => {
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
