// Upstream conformance test HTTPRouteMultipleGateways (Gateway API v1.6.1
// conformance/tests/httproute-multiple-gateways.go), with its manifest and expectations.
import { describe } from 'vitest';
import { httpCases, routesAccepted, runConformanceTest } from '../support/run.ts';
import { INFRA_NS as ns } from '../utils/suite.ts';

runConformanceTest({
  shortName: 'HTTPRouteMultipleGateways',
  description:
    'An HTTPRoute that is attached to multiple Gateways receives traffic from each Gateway independently, and shared routes are accessible via all parent Gateways while dedicated routes are only accessible via their respective parent.',
  features: ['Gateway', 'HTTPRoute'],
  manifests: ['tests/httproute-multiple-gateways.yaml'],
  test(s) {
    for (const [gw, dedicated, backend] of [
      ['same-namespace', 'same-namespace-dedicated-route', 'infra-backend-v2'],
      ['all-namespaces', 'all-namespaces-dedicated-route', 'infra-backend-v3'],
    ]) {
      describe(`Gateway ${gw}`, () => {
        const addr = routesAccepted(
          s,
          { namespace: ns, name: gw },
          [
            { namespace: ns, name: 'multiple-gateways-shared-route' },
            { namespace: ns, name: dedicated },
          ],
          { resolvedRefs: false },
        );
        httpCases(s, addr, [
          {
            testCaseName: 'shared route is accessible and routed to infra-backend-v1',
            request: { path: '/shared' },
            response: { statusCode: 200 },
            backend: 'infra-backend-v1',
            namespace: ns,
          },
          {
            testCaseName: `dedicated route is accessible and routed to ${backend}`,
            request: { path: '/' },
            response: { statusCode: 200 },
            backend,
            namespace: ns,
          },
        ]);
      });
    }
  },
});
