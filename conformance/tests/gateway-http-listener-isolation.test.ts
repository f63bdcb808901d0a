// Upstream conformance test GatewayHTTPListenerIsolation (Gateway API v1.6.1
// conformance/tests/gateway-http-listener-isolation.go), with its manifests and expectations: four HTTP listeners on
// one port (no hostname, *.example.com, *.foo.example.com, abc.foo.example.com), each route reachable only through
// the most specific listener matching the request's host; once with hostnames only on the listeners, once with
// intersecting hostnames on the routes too.
import { describe, it } from 'vitest';
import { httpCases, routesAccepted, runConformanceTest } from '../support/run.ts';
import type { ExpectedResponse } from '../utils/http.ts';
import { namespacesMustBeReady } from '../utils/kubernetes.ts';
import { INFRA_NS as ns } from '../utils/suite.ts';

const v1 = 'infra-backend-v1';
const ok = (host: string, path: string): ExpectedResponse => ({ request: { host, path }, backend: v1, namespace: ns });
const notFound = (host: string, path: string): ExpectedResponse => ({
  request: { host, path },
  response: { statusCode: 404 },
});

const cases: ExpectedResponse[] = [
  ok('bar.com', '/empty-hostname'),
  notFound('bar.com', '/wildcard-example-com'),
  notFound('bar.com', '/wildcard-foo-example-com'),
  notFound('bar.com', '/abc-foo-example-com'),
  notFound('bar.example.com', '/empty-hostname'),
  ok('bar.example.com', '/wildcard-example-com'),
  notFound('bar.example.com', '/wildcard-foo-example-com'),
  notFound('bar.example.com', '/abc-foo-example-com'),
  notFound('bar.foo.example.com', '/empty-hostname'),
  notFound('bar.foo.example.com', '/wildcard-example-com'),
  ok('bar.foo.example.com', '/wildcard-foo-example-com'),
  notFound('bar.foo.example.com', '/abc-foo-example-com'),
  notFound('abc.foo.example.com', '/empty-hostname'),
  notFound('abc.foo.example.com', '/wildcard-example-com'),
  { ...notFound('abc.foo.example.com', '/wildcard-foo-example-com'), namespace: ns },
  ok('abc.foo.example.com', '/abc-foo-example-com'),
];

const ROUTES = ['empty-hostname', 'wildcard-example-com', 'wildcard-foo-example-com', 'abc-foo-example-com'];

runConformanceTest({
  shortName: 'GatewayHTTPListenerIsolation',
  description: 'Listener isolation for HTTP listeners with multiple listeners and HTTPRoutes',
  features: ['Gateway', 'GatewayHTTPListenerIsolation', 'HTTPRoute'],
  manifests: [
    'tests/gateway-http-listener-isolation.yaml',
    'tests/gateway-http-listener-isolation-with-hostname-intersection.yaml',
  ],
  test(s) {
    it('namespaces must be ready', () => namespacesMustBeReady(s.kube, s.timeoutConfig, [ns]));
    const variants = [
      ['hostnames are configured only in listeners', ''],
      ['intersecting hostnames are configured in listeners and HTTPRoutes', '-with-hostname-intersection'],
    ] as const;
    for (const [name, suffix] of variants) {
      describe(name, () => {
        const gw = { namespace: ns, name: `http-listener-isolation${suffix}` };
        const routes = ROUTES.map((r) => ({ namespace: ns, name: `attaches-to-${r}${suffix}` }));
        httpCases(s, routesAccepted(s, gw, routes), cases);
      });
    }
  },
});
