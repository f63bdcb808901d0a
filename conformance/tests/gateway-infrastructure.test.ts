// Upstream conformance test GatewayInfrastructure (Gateway API v1.6.1 conformance/tests/gateway-infrastructure.go,
// provisional), with its manifest and expectations: the Gateway's spec.infrastructure labels and annotations reach
// every generated ServiceAccount, Pod and Service carrying the gateway-name label (GEP-1867).
import { expect, it } from 'vitest';
import { runConformanceTest } from '../support/run.ts';
import { GW, gatewayMustHaveCondition, mustHaveLatestConditions, namespacesMustBeReady } from '../utils/kubernetes.ts';
import { INFRA_NS } from '../utils/suite.ts';

const GATEWAY_NAME_LABEL = 'gateway.networking.k8s.io/gateway-name';

runConformanceTest({
  shortName: 'GatewayInfrastructure',
  description: 'Propagation of metadata from Gateway infrastructure to generated components',
  features: ['Gateway', 'GatewayInfrastructurePropagation'],
  provisional: true,
  manifests: ['tests/gateway-infrastructure.yaml'],
  test(s) {
    it('generated resources carry the infrastructure labels and annotations', async () => {
      const gwNN = { namespace: INFRA_NS, name: 'gateway-with-infrastructure-metadata' };
      await namespacesMustBeReady(s.kube, s.timeoutConfig, [INFRA_NS]);
      await mustHaveLatestConditions(s.kube, s.timeoutConfig, 'Gateway', gwNN);
      const gw = (await s.kube.get(GW, 'Gateway', gwNN.name, gwNN.namespace))!;
      await gatewayMustHaveCondition(s.kube, s.timeoutConfig, gwNN, { type: 'Accepted', status: 'True' });
      const labels: Record<string, string> = gw.spec.infrastructure?.labels ?? {};
      const annotations: Record<string, string> = gw.spec.infrastructure?.annotations ?? {};
      const selector = `${GATEWAY_NAME_LABEL}=${gwNN.name}`;
      // Upstream polls until any ServiceAccount, Pod or Service with the label exists, then checks the first of each.
      const deadline = Date.now() + s.timeoutConfig.defaultTestTimeout;
      let found: { sa: any[]; pods: any[]; services: any[] } = { sa: [], pods: [], services: [] };
      for (;;) {
        found = {
          sa: await s.kube.list('v1', 'ServiceAccount', INFRA_NS, selector),
          pods: await s.kube.list('v1', 'Pod', INFRA_NS, selector),
          services: await s.kube.list('v1', 'Service', INFRA_NS, selector),
        };
        if (found.sa.length + found.pods.length + found.services.length > 0) break;
        if (Date.now() > deadline)
          throw new Error('expected a ServiceAccount, Pod, or Service with the gateway-name label');
        await new Promise((r) => setTimeout(r, s.timeoutConfig.defaultPollInterval));
      }
      for (const [what, items] of Object.entries(found)) {
        if (items.length === 0) continue;
        const meta = items[0].metadata;
        expect(meta.labels ?? {}, `${what} labels`).toMatchObject(labels);
        expect(meta.annotations ?? {}, `${what} annotations`).toMatchObject(annotations);
      }
    });
  },
});
