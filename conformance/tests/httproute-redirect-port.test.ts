// Upstream conformance test HTTPRouteRedirectPort (Gateway API v1.6.1 conformance/tests/httproute-redirect-port.go),
// with its manifest and expectations.
import { httpCases, redirectCase, routesAccepted, runConformanceTest } from '../support/run.ts';
import { INFRA_NS as ns } from '../utils/suite.ts';

runConformanceTest({
  shortName: 'HTTPRouteRedirectPort',
  description: 'An HTTPRoute with a port redirect filter',
  features: ['Gateway', 'HTTPRoute', 'HTTPRoutePortRedirect'],
  manifests: ['tests/httproute-redirect-port.yaml'],
  test(s) {
    const addr = routesAccepted(s, { namespace: ns, name: 'same-namespace' }, [
      { namespace: ns, name: 'redirect-port' },
    ]);
    httpCases(s, addr, [
      redirectCase('/port', 302, { port: '8083' }, ns),
      redirectCase('/port-and-host', 302, { host: 'example.org', port: '8083' }, ns),
      redirectCase('/port-and-status', 301, { port: '8083' }, ns),
      redirectCase('/port-and-host-and-status', 302, { port: '8083', host: 'example.org' }, ns),
    ]);
  },
});
