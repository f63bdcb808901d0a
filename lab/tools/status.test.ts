// collectStatus against an API server alone (no controllers, no node): the installed control plane never becomes
// ready and has no pod to port-forward to, which is how "control plane down" looks. The sections that can be read
// still are, and the problems say what is wrong. Then the API server itself goes away.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestLab, type TestLab } from '../embedded/apiserver/testing/test-lab.ts';
import { controlPlaneManifests } from '../install.ts';
import { projectCrds } from '../testing/crds.ts';
import { Kube } from '../toolkit/kube.ts';
import { collectStatus } from './status.ts';
import { renderStatus } from './status-render.ts';

describe('lab:status data: control plane down', () => {
  let lab: TestLab;
  let kube: Kube;

  beforeAll(async () => {
    lab = await startTestLab({ labName: 'status' });
    kube = Kube.fromFile(lab.server.kubeconfigPath);
    await kube.apply(projectCrds());
    await kube.apply(controlPlaneManifests({ validation: 'off' }));
    await kube.apply(`
apiVersion: v1
kind: Namespace
metadata: {name: team}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: team}
spec:
  gatewayClassName: gwvendor
  listeners: [{name: http, protocol: HTTP, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web, namespace: team}
spec:
  parentRefs: [{name: gw}]
  rules: [{backendRefs: [{name: nope, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: GRPCRoute
metadata: {name: grpc, namespace: team}
spec:
  parentRefs: [{name: gw}, {name: not-ours, namespace: other}]
  rules: [{backendRefs: [{name: grpc, port: 9000}]}]
`);
    const status = {
      status: {
        parents: [
          {
            parentRef: { name: 'gw' },
            controllerName: 'gateway.gwvendor.dev/gwvendor',
            conditions: [
              {
                type: 'ResolvedRefs',
                status: 'False',
                reason: 'BackendNotFound',
                message: 'Service team/nope not found',
                observedGeneration: 1,
                lastTransitionTime: '2026-01-01T00:00:00Z',
              },
            ],
          },
        ],
      },
    };
    await lab.k([
      'patch',
      'httproute',
      'web',
      '-n',
      'team',
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify(status),
    ]);
  });
  afterAll(() => lab?.stop());

  it('reports the control plane not ready and its admin unreachable, and still shows the rest', async () => {
    const s = await collectStatus({ kube });
    expect(s.controlPlane).toMatchObject({ found: true, ready: 0, desired: 1, validation: 'off', pods: [] });
    expect(s.proxies.reachable).toBe(false);
    expect(s.proxies.reason).toMatch(/no Running and Ready pod in namespace gwvendor-system/);
    expect(s.gateways).toEqual([
      expect.objectContaining({ namespace: 'team', name: 'gw', class: 'gwvendor', listeners: ['http:80/HTTP'] }),
    ]);
    const rows = s.conditions.map((c) => `${c.kind} ${c.name} ${c.target} ${c.type} ${c.reason} ${c.health}`);
    // No controller has written a status: the upstream CRDs' status defaults (Unknown, Pending, "Waiting for
    // controller") are what a real cluster shows, a warning each.
    expect(rows).toEqual([
      'GatewayClass gwvendor gateway.gwvendor.dev/gwvendor Accepted Pending warning',
      'Gateway gw gatewayclass/gwvendor Accepted Pending warning',
      'Gateway gw gatewayclass/gwvendor Programmed Pending warning',
      'HTTPRoute web gateway/team/gw ResolvedRefs BackendNotFound problem',
      // GRPCRoutes are read (issue 12): a row of their own, here the warning that no controller wrote a status yet.
      'GRPCRoute grpc gateway/team/gw, gateway/other/not-ours  NoStatus warning',
    ]);
    expect(s.problems).toEqual([
      'control plane 0/1 ready: kubectl -n gwvendor-system describe deploy/gwvendor',
      expect.stringMatching(/^control plane admin \(\/snapshots\/xds\) not reachable: no Running and Ready pod/),
      'HTTPRoute team/web [gateway/team/gw] ResolvedRefs=False BackendNotFound: Service team/nope not found',
    ]);
    // A GRPCRoute is read (issue 12): not the unread-kind warning it got before, its status rows instead.
    expect(s.warnings.filter((w) => w.startsWith('GRPCRoute'))).toEqual([
      'GRPCRoute team/grpc: no controller has written a status for its parents (gateway/team/gw, gateway/other/not-ours)',
    ]);
    const text = renderStatus(s);
    expect(text).toMatch(/Proxies \(control plane \/snapshots\/xds\)\n {2}✗ not reachable: no Running and Ready pod/);
    expect(text).toMatch(/deployment gwvendor-system\/gwvendor: 0\/1 ready {3}validation off/);
    expect(text).toMatch(/^✗ 3 problem\(s\):$/m);
  });

  it('scoped to a namespace, shows only its objects and the classes its Gateways use', async () => {
    const s = await collectStatus({ kube }, { namespace: 'elsewhere' });
    expect(s.namespace).toBe('elsewhere');
    expect(s.gateways).toEqual([]);
    expect(s.conditions).toEqual([]);
    expect(s.problems.some((p) => p.includes('HTTPRoute'))).toBe(false);
  });

  it('with the API server gone, says so once instead of failing every section', async () => {
    await lab.server.stop();
    const s = await collectStatus({ kube });
    expect(s.problems).toEqual([
      expect.stringMatching(/^cannot reach the API server at https:\/\/127\.0\.0\.1:\d+: .*is the lab up\?/),
    ]);
    expect(renderStatus(s)).toContain('not read: the API server is unreachable');
  });
});
