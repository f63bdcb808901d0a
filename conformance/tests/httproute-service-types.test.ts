// Upstream conformance test HTTPRouteServiceTypes (Gateway API v1.6.1 conformance/tests/httproute-service-types.go),
// with its manifest and expectations: the manual EndpointSlices get the addresses of infra-backend-v1's pods (per IP
// family) as upstream's setupEndpointSlices patches them, then each Service type is reached.
import { it } from 'vitest';
import { httpCases, routesAccepted, runConformanceTest } from '../support/run.ts';
import { mergePatch } from '../utils/kubernetes.ts';
import { INFRA_NS as ns } from '../utils/suite.ts';

const MANUAL = ['manual-endpointslices', 'headless-manual-endpointslices'];
const SERVICE_TYPES = [...MANUAL, 'headless'];

runConformanceTest({
  shortName: 'HTTPRouteServiceTypes',
  description: 'A single HTTPRoute should be able to route traffic to various service type backends',
  features: ['Gateway', 'HTTPRoute'],
  manifests: ['tests/httproute-service-types.yaml'],
  test(s) {
    const addr = routesAccepted(s, { namespace: ns, name: 'same-namespace' }, [
      { namespace: ns, name: 'service-types' },
    ]);
    it('the manual EndpointSlices get the addresses of infra-backend-v1', async () => {
      const dep = await s.kube.get('apps/v1', 'Deployment', 'infra-backend-v1', ns);
      const selector = Object.entries(dep?.spec?.selector?.matchLabels ?? {})
        .map(([k, v]) => `${k}=${v}`)
        .join(',');
      const pods = await s.kube.list('v1', 'Pod', ns, selector);
      if (!pods.length) throw new Error("Expected 'infra-backend-v1' to have running Pods");
      for (const [suffix, is] of [
        ['ip4', (ip: string) => !ip.includes(':')],
        ['ip6', (ip: string) => ip.includes(':')],
      ] as const) {
        for (const prefix of MANUAL) {
          const name = `${prefix}-${suffix}`;
          const slice = await s.kube.get('discovery.k8s.io/v1', 'EndpointSlice', name, ns);
          if (!slice) throw new Error(`Unable to fetch EndpointSlice "${name}"`);
          const endpoints = pods.flatMap((p) =>
            (p.status?.podIPs ?? [])
              .filter((x: { ip: string }) => is(x.ip))
              .map((x: { ip: string }) => ({
                addresses: [x.ip],
                conditions: { ready: true, serving: true, terminating: false },
                nodeName: p.spec?.nodeName,
                targetRef: { kind: 'Pod', name: p.metadata?.name, namespace: ns, uid: p.metadata?.uid },
              })),
          );
          if (endpoints.length) await mergePatch(s.kube, slice, { endpoints });
        }
      }
    });
    httpCases(
      s,
      addr,
      SERVICE_TYPES.map((path) => ({
        request: { path: `/${path}` },
        response: { statusCode: 200 },
        backend: 'infra-backend-v1',
        namespace: ns,
      })),
    );
  },
});
