// The Services a backend policy targets (service-targets.ts), the one reading BackendTLSPolicy and
// BackendConfigPolicy share: only core-group Service targetRefs (Gateway API's LocalPolicyTargetReference: in the
// policy's namespace), sectionName kept, index keys once per Service; and the port name a cluster's sectionName names.
import { describe, expect, it } from 'vitest';
import type { BackendTLSPolicy, Service } from '../model.ts';
import { clusterPortName, serviceTargetKeys, serviceTargets } from './service-targets.ts';

const policy: BackendTLSPolicy = {
  apiVersion: 'gateway.networking.k8s.io/v1',
  kind: 'BackendTLSPolicy',
  metadata: { name: 'p', namespace: 'app' },
  spec: {
    targetRefs: [
      { group: '', kind: 'Service', name: 'a', sectionName: 'https' },
      { group: '', kind: 'Service', name: 'a' },
      { kind: 'Service', name: 'b' },
      { group: 'example.com', kind: 'Service', name: 'c' },
      { group: '', kind: 'ConfigMap', name: 'd' },
    ],
  },
};

describe('service targets', () => {
  it('reads core Service targetRefs in the policy namespace, with their sectionName', () => {
    expect(serviceTargets(policy)).toEqual([
      { namespace: 'app', service: 'a', sectionName: 'https' },
      { namespace: 'app', service: 'a' },
      { namespace: 'app', service: 'b' },
    ]);
    expect(serviceTargetKeys(policy)).toEqual(['app/a', 'app/b']);
  });

  it('names the Service port a cluster sends to, if the port has a name', () => {
    const svc: Service = {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'a', namespace: 'app' },
      spec: { ports: [{ name: 'https', port: 443 }, { port: 80 }] },
    };
    const lookup = (ns: string, name: string) => (ns === 'app' && name === 'a' ? svc : undefined);
    const cluster = (service: string, port: number) => ({ name: 'c', namespace: 'app', service, port });
    expect(clusterPortName(cluster('a', 443), lookup)).toBe('https');
    expect(clusterPortName(cluster('a', 80), lookup)).toBeUndefined();
    expect(clusterPortName(cluster('gone', 443), lookup)).toBeUndefined();
  });
});
