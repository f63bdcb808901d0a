// Upstream conformance test GatewayStaticAddresses (Gateway API v1.6.1 conformance/tests/gateway-static-addresses.go),
// with its manifest and expectations: a Gateway asking for an address type gwlab does not support is not accepted
// (UnsupportedAddress); without it, an unusable address keeps it from being programmed (AddressNotUsable); with only
// the usable address it is programmed with exactly that address in its status. The placeholders take the suite's
// address pools (global-setup.ts: on the embedded lab, one address of its LoadBalancer range and one of TEST-NET-1).
import { expect, it } from 'vitest';
import { runConformanceTest } from '../support/run.ts';
import {
  GROUP,
  GW,
  gatewayMustHaveCondition,
  gatewayStatusMustHaveListeners,
  mergePatch,
  mustHaveLatestConditions,
} from '../utils/kubernetes.ts';
import { INFRA_NS } from '../utils/suite.ts';

runConformanceTest({
  shortName: 'GatewayStaticAddresses',
  description:
    'A Gateway in the gateway-conformance-infra namespace should be able to use previously determined addresses.',
  features: ['Gateway', 'GatewayStaticAddresses'],
  manifests: ['tests/gateway-static-addresses.yaml'],
  test(s) {
    it('moves from UnsupportedAddress to AddressNotUsable to Programmed with the usable address', async () => {
      const gwNN = { namespace: INFRA_NS, name: 'gateway-static-addresses' };
      const tc = s.timeoutConfig;
      await mustHaveLatestConditions(s.kube, tc, 'Gateway', gwNN);
      let gw = (await s.kube.get(GW, 'Gateway', gwNN.name, gwNN.namespace))!;
      const addrs: { type?: string; value: string }[] = gw.spec.addresses ?? [];
      expect(addrs, 'expected 3 addresses on the Gateway, one invalid, one usable and one unusable').toHaveLength(3);
      const [invalid, unusable, usable] = addrs;

      await gatewayMustHaveCondition(s.kube, tc, gwNN, {
        type: 'Accepted',
        status: 'False',
        reason: 'UnsupportedAddress',
      });
      gw = await mergePatch(s.kube, gw, { spec: { addresses: addrs.filter((a) => a.value !== invalid.value) } });
      await mustHaveLatestConditions(s.kube, tc, 'Gateway', gwNN);
      await gatewayMustHaveCondition(s.kube, tc, gwNN, { type: 'Accepted', status: 'True', reason: 'Accepted' });
      await gatewayMustHaveCondition(s.kube, tc, gwNN, {
        type: 'Programmed',
        status: 'False',
        reason: 'AddressNotUsable',
      });

      gw = (await s.kube.get(GW, 'Gateway', gwNN.name, gwNN.namespace))!;
      await mergePatch(s.kube, gw, {
        spec: { addresses: gw.spec.addresses.filter((a: { value: string }) => a.value !== unusable.value) },
      });
      await mustHaveLatestConditions(s.kube, tc, 'Gateway', gwNN);
      await gatewayMustHaveCondition(s.kube, tc, gwNN, { type: 'Accepted', status: 'True', reason: 'Accepted' });
      await gatewayMustHaveCondition(s.kube, tc, gwNN, { type: 'Programmed', status: 'True', reason: 'Programmed' });
      await gatewayStatusMustHaveListeners(s.kube, tc, gwNN, [
        {
          name: 'http',
          supportedKinds: [{ group: GROUP, kind: 'HTTPRoute' }],
          attachedRoutes: 0,
          conditions: [
            { type: 'Accepted', status: 'True' },
            { type: 'ResolvedRefs', status: 'True' },
          ],
        },
      ]);
      // require.Eventually: exactly one status address, within GatewayMustHaveAddress.
      const deadline = Date.now() + tc.gatewayMustHaveAddress;
      let status: { type: string; value: string }[] = [];
      for (;;) {
        status = (await s.kube.get(GW, 'Gateway', gwNN.name, gwNN.namespace))?.status?.addresses ?? [];
        if (status.length === 1 || Date.now() > deadline) break;
        await new Promise((r) => setTimeout(r, tc.defaultPollInterval));
      }
      expect(status, 'expected only 1 status address on Gateway').toHaveLength(1);
      const values = status.map((a) => a.value);
      expect(values, 'should not contain the unusable address').not.toContain(unusable.value);
      expect(values, 'should not contain the invalid address').not.toContain(invalid.value);
      expect(values, 'should contain the usable address').toContain(usable.value);
      expect(status[0].type, 'expected address type to match the usable address').toBe(usable.type ?? 'IPAddress');
    });
  },
});
