// Upstream conformance test BackendTLSPolicy (Gateway API v1.6.1 conformance/tests/backendtlspolicy.go), with its
// manifest and expectations: re-encrypt through the HTTPS listener, HTTP requests to a Service whose BackendTLSPolicy
// holds (the backend must have seen the policy's hostname as SNI), a hostname the certificate does not carry and a CA
// that did not sign it (both fail), and the CA ConfigMap's content reconciled (missing, emptied, restored).
import { afterAll, it } from 'vitest';
import { runConformanceTest } from '../support/run.ts';
import {
  makeRequestAndExpectEventuallyConsistentResponse,
  makeRequestAndExpectFailure,
  makeTLSRequestAndExpectEventuallyConsistentResponse,
} from '../utils/http.ts';
import {
  backendTLSPolicyMustHaveCondition,
  type Cond,
  GW,
  gatewayAndRoutesMustBeAccepted,
  httpRouteMustHaveResolvedRefsConditionsTrue,
  mergePatch,
  namespacesMustBeReady,
} from '../utils/kubernetes.ts';
import { INFRA_NS as ns } from '../utils/suite.ts';

const accepted: Cond = { type: 'Accepted', status: 'True', reason: 'Accepted' };
const resolved: Cond = { type: 'ResolvedRefs', status: 'True', reason: 'ResolvedRefs' };
const invalidAccepted: Cond = { type: 'Accepted', status: 'False', reason: 'NoValidCACertificate' };
const invalidResolved: Cond = { type: 'ResolvedRefs', status: 'False', reason: 'InvalidCACertificateRef' };

runConformanceTest({
  shortName: 'BackendTLSPolicy',
  description: 'BackendTLSPolicy must be used to configure TLS connection between gateway and backend',
  features: ['Gateway', 'HTTPRoute', 'BackendTLSPolicy'],
  manifests: ['tests/backendtlspolicy.yaml'],
  test(s) {
    const gwNN = { namespace: ns, name: 'same-namespace' };
    const httpsGwNN = { namespace: ns, name: 'same-namespace-with-https-listener' };
    const policy = (name: string) => ({ namespace: ns, name });
    let gwAddr: string | undefined;

    it('Re-encrypt HTTPS request sent to Service with valid BackendTLSPolicy should succeed', async () => {
      await namespacesMustBeReady(s.kube, s.timeoutConfig, [ns]);
      const routeNN = { namespace: ns, name: 'backendtlspolicy-reencrypt' };
      const addr = await gatewayAndRoutesMustBeAccepted(s.kube, s.timeoutConfig, s.controllerName, httpsGwNN, [
        routeNN,
      ]);
      await httpRouteMustHaveResolvedRefsConditionsTrue(s.kube, s.timeoutConfig, routeNN, httpsGwNN);
      await backendTLSPolicyMustHaveCondition(s.kube, s.timeoutConfig, policy('normative-test'), httpsGwNN, accepted);
      await backendTLSPolicyMustHaveCondition(s.kube, s.timeoutConfig, policy('normative-test'), httpsGwNN, resolved);
      const secret = await s.kube.get('v1', 'Secret', 'tls-validity-checks-certificate', ns);
      const cert = Buffer.from(secret?.data?.['tls.crt'] ?? '', 'base64').toString();
      if (!cert) throw new Error('missing required server certificate pem for the test');
      await makeTLSRequestAndExpectEventuallyConsistentResponse(s.timeoutConfig, addr, cert, 'https-listener.org', {
        namespace: ns,
        request: { host: 'https-listener.org', path: '/backendtlspolicy', sni: 'https-listener.org' },
        expectedRequest: { path: '/backendtlspolicy', sni: 'abc.example.com' },
        response: { statusCodes: [200] },
      });
    });

    it('Gateway and HTTPRoute must be accepted', async () => {
      const routeNN = { namespace: ns, name: 'backendtlspolicy' };
      gwAddr = await gatewayAndRoutesMustBeAccepted(s.kube, s.timeoutConfig, s.controllerName, gwNN, [routeNN]);
      await httpRouteMustHaveResolvedRefsConditionsTrue(s.kube, s.timeoutConfig, routeNN, gwNN);
    });
    const addr = () => {
      if (!gwAddr) throw new Error('no gateway address: the status case of this test failed');
      return gwAddr;
    };

    it('HTTP request sent to Service with valid BackendTLSPolicy should succeed', async () => {
      await backendTLSPolicyMustHaveCondition(s.kube, s.timeoutConfig, policy('normative-test'), gwNN, accepted);
      await backendTLSPolicyMustHaveCondition(s.kube, s.timeoutConfig, policy('normative-test'), gwNN, resolved);
      await makeRequestAndExpectEventuallyConsistentResponse(s.timeoutConfig, addr(), {
        namespace: ns,
        request: { host: 'abc.example.com', path: '/backendtlspolicy', sni: 'abc.example.com' },
        response: { statusCodes: [200] },
      });
    });

    it('HTTP request sent to Service targeted by BackendTLSPolicy with mismatched hostname should return an HTTP error', async () => {
      await backendTLSPolicyMustHaveCondition(s.kube, s.timeoutConfig, policy('host-mismatch'), gwNN, accepted);
      await backendTLSPolicyMustHaveCondition(s.kube, s.timeoutConfig, policy('host-mismatch'), gwNN, resolved);
      await makeRequestAndExpectFailure(s.timeoutConfig, addr(), {
        namespace: ns,
        request: { host: 'abc.example.org', path: '/backendtlspolicy-host-mismatch', sni: 'abc.example.com' },
      });
    });

    it('HTTP request send to Service targeted by BackendTLSPolicy with mismatched cert should return HTTP error', async () => {
      await backendTLSPolicyMustHaveCondition(s.kube, s.timeoutConfig, policy('cert-mismatch'), gwNN, accepted);
      await backendTLSPolicyMustHaveCondition(s.kube, s.timeoutConfig, policy('cert-mismatch'), gwNN, resolved);
      await makeRequestAndExpectFailure(s.timeoutConfig, addr(), {
        namespace: ns,
        request: { host: 'abc.example.com', path: '/backendtlspolicy-cert-mismatch', sni: 'abc.example.com' },
      });
    });

    const testCmName = 'tls-checks-ca-certificate-reconcile-test';
    afterAll(() =>
      s.kube.delete({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: testCmName, namespace: ns } }),
    );

    it('Changing the content of a ConfigMap used by BackendTLSPolicy as CA certificate should be reconciled by the controller', async () => {
      const testPolicyNN = policy('reconcile-test');
      await backendTLSPolicyMustHaveCondition(s.kube, s.timeoutConfig, testPolicyNN, gwNN, accepted);
      await backendTLSPolicyMustHaveCondition(s.kube, s.timeoutConfig, testPolicyNN, gwNN, resolved);
      const shared = await s.kube.get('v1', 'ConfigMap', 'tls-checks-ca-certificate', ns);
      const originalCA = String(shared?.data?.['ca.crt'] ?? '');
      const original = (await s.kube.get(GW, 'BackendTLSPolicy', testPolicyNN.name, ns))!;
      const originalRefs = original.spec.validation.caCertificateRefs;
      await mergePatch(s.kube, original, {
        spec: { validation: { caCertificateRefs: [{ group: '', kind: 'ConfigMap', name: testCmName }] } },
      });
      await backendTLSPolicyMustHaveCondition(s.kube, s.timeoutConfig, testPolicyNN, gwNN, invalidAccepted);
      await backendTLSPolicyMustHaveCondition(s.kube, s.timeoutConfig, testPolicyNN, gwNN, invalidResolved);
      const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: testCmName, namespace: ns } };
      await s.kube.apply({ ...cm, data: { 'ca.crt': originalCA } });
      await backendTLSPolicyMustHaveCondition(s.kube, s.timeoutConfig, testPolicyNN, gwNN, accepted);
      await backendTLSPolicyMustHaveCondition(s.kube, s.timeoutConfig, testPolicyNN, gwNN, resolved);
      await mergePatch(s.kube, cm, { data: { 'ca.crt': '' } });
      await backendTLSPolicyMustHaveCondition(s.kube, s.timeoutConfig, testPolicyNN, gwNN, invalidAccepted);
      await backendTLSPolicyMustHaveCondition(s.kube, s.timeoutConfig, testPolicyNN, gwNN, invalidResolved);
      await mergePatch(s.kube, cm, { data: { 'ca.crt': originalCA } });
      await backendTLSPolicyMustHaveCondition(s.kube, s.timeoutConfig, testPolicyNN, gwNN, accepted);
      await backendTLSPolicyMustHaveCondition(s.kube, s.timeoutConfig, testPolicyNN, gwNN, resolved);
      const current = (await s.kube.get(GW, 'BackendTLSPolicy', testPolicyNN.name, ns))!;
      await mergePatch(s.kube, current, { spec: { validation: { caCertificateRefs: originalRefs } } });
    });
  },
});
