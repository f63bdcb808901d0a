// Upstream conformance test TLSRouteHostnameIntersection (Gateway API v1.6.1 conformance/tests/
// tlsroute-hostname-intersection.go), with its manifest and expectations: TLS Passthrough listeners with an exact,
// a more specific wildcard, a less specific wildcard and no hostname; TLSRoutes attach where their hostnames intersect,
// HTTPS requests by SNI reach tls-backend or tls-backend-2 through the passthrough (trusting tls-checks-certificate,
// the backends' own certificate), and a name outside the intersections is rejected.
import { it } from 'vitest';
import { runConformanceTest } from '../support/run.ts';
import { makeTLSRequestAndExpectEventuallyConsistentResponse } from '../utils/http.ts';
import {
  gatewayAndTLSRoutesMustBeAccepted,
  type NN,
  namespacesMustBeReady,
  routeMustHaveCondition,
} from '../utils/kubernetes.ts';
import type { Suite } from '../utils/suite.ts';
import { INFRA_NS as ns } from '../utils/suite.ts';
import { makeTLSConnectionAndExpectEventuallyConnectionRejection } from '../utils/tcp.ts';

/** One subtest of upstream's: the Gateway and routes accepted with resolved refs, then the requests. */
function intersection(
  s: Suite,
  cert: () => string,
  title: string,
  gwName: string,
  routes: string[],
  requests: { host: string; backend: string }[],
  rejected: string,
): void {
  const gwNN: NN = { namespace: ns, name: gwName };
  let gwAddr = '';
  it(`${title}: Gateway and TLSRoutes accepted, ResolvedRefs True`, async () => {
    const routeNNs = routes.map((name) => ({ namespace: ns, name }));
    ({ addr: gwAddr } = await gatewayAndTLSRoutesMustBeAccepted(
      s.kube,
      s.timeoutConfig,
      s.controllerName,
      gwNN,
      routeNNs,
    ));
    for (const r of routeNNs)
      await routeMustHaveCondition(
        s.kube,
        s.timeoutConfig,
        r,
        gwNN,
        { type: 'ResolvedRefs', status: 'True', reason: 'ResolvedRefs' },
        'TLSRoute',
      );
  });
  for (const r of requests) {
    const what =
      r.backend === 'tls-backend'
        ? 'exact hostnames intersection should reach backend'
        : 'wildcard hostnames intersection should reach backend 2';
    it(`${title}: TLS request matching ${what}`, async () => {
      if (!gwAddr) throw new Error('no gateway address: the status case of this test failed');
      await makeTLSRequestAndExpectEventuallyConsistentResponse(s.timeoutConfig, gwAddr, cert(), r.host, {
        request: { host: r.host, path: '/' },
        backend: r.backend,
        namespace: ns,
      });
    });
  }
  it(`${title}: TLS request not matching hostnames intersection should not reach backend`, async () => {
    if (!gwAddr) throw new Error('no gateway address: the status case of this test failed');
    await makeTLSConnectionAndExpectEventuallyConnectionRejection(s.timeoutConfig, gwAddr, rejected);
  });
}

runConformanceTest({
  shortName: 'TLSRouteHostnameIntersection',
  description:
    'TLSRoutes should attach to listeners only if they have intersecting hostnames, and should accept requests only for the intersecting hostnames',
  features: ['Gateway', 'TLSRoute'],
  manifests: ['tests/tlsroute-hostname-intersection.yaml'],
  test(s) {
    let cert = '';
    it('namespaces ready, server certificate read', async () => {
      await namespacesMustBeReady(s.kube, s.timeoutConfig, [ns]);
      const secret = await s.kube.get('v1', 'Secret', 'tls-checks-certificate', ns);
      cert = Buffer.from(secret?.data?.['tls.crt'] ?? '', 'base64').toString();
      if (!cert) throw new Error('missing required server certificate pem for the test');
    });
    const abc = { host: 'abc.example.com', backend: 'tls-backend' };
    const other = { host: 'other.example.com', backend: 'tls-backend-2' };
    intersection(
      s,
      () => cert,
      'TLSRoutes intersect with exact listener hostname',
      'gw-tlsroute-exact-hostname-x-1',
      ['tlsroute-more-specific-wc-hostname-x-1'],
      [abc],
      'non.matching.com',
    );
    intersection(
      s,
      () => cert,
      'TLSRoutes intersect with more specific wildcard listener hostname',
      'gw-tlsroute-more-specific-wc-hostname-x-2',
      ['tlsroute-exact-hostname-x-2', 'tlsroute-less-specific-wc-hostname-x-2'],
      [abc, other],
      'non.matching.com',
    );
    intersection(
      s,
      () => cert,
      'TLSRoutes intersect with less specific wildcard listener hostname',
      'gw-tlsroute-less-specific-wc-hostname-x-3',
      ['tlsroute-exact-hostname-x-3', 'tlsroute-more-specific-wc-hostname-x-3'],
      [abc, other],
      'non.matching.com',
    );
    intersection(
      s,
      () => cert,
      'TLSRoutes intersect with empty listener hostname',
      'gw-tlsroute-empty-hostname-x-4',
      ['tlsroute-exact-hostname-x-4', 'tlsroute-less-specific-wc-hostname-x-4'],
      [abc, other],
      'non.matching.org',
    );
  },
});
