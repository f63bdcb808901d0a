// Upstream conformance test UDPRoute (Gateway API v1.6.1 conformance/tests/udproute-simple.go, provisional), with its
// manifest and expectations: a DNS query for foo.bar.com. through the Gateway's UDP listener gets a DNS response from
// the base manifests' coredns backend (upstream's dns.Exchange, retried every second for DefaultTestTimeout).
import { setTimeout as sleep } from 'node:timers/promises';
import dnsPacket from 'dns-packet';
import { it } from 'vitest';
import { runConformanceTest } from '../support/run.ts';
import { gatewayAndRoutesMustBeAccepted } from '../utils/kubernetes.ts';
import { INFRA_NS as namespace } from '../utils/suite.ts';
import { udpExchange } from '../utils/udp.ts';

runConformanceTest({
  shortName: 'UDPRoute',
  description: 'Make sure UDPRoute is working',
  features: ['UDPRoute', 'Gateway'],
  provisional: true,
  manifests: ['tests/udproute-simple.yaml'],
  test(s) {
    it('Simple UDP request matching UDPRoute should reach coredns backend', async () => {
      const domain = 'foo.bar.com.';
      const routeNN = { name: 'udp-coredns', namespace };
      const gwNN = { name: 'udp-gateway', namespace };
      const gwAddr = await gatewayAndRoutesMustBeAccepted(
        s.kube,
        s.timeoutConfig,
        s.controllerName,
        gwNN,
        [routeNN],
        'UDPRoute',
      );
      const deadline = Date.now() + s.timeoutConfig.defaultTestTimeout;
      let last = '';
      for (let id = 1; ; id++) {
        const msg = dnsPacket.encode({
          type: 'query',
          id,
          flags: dnsPacket.RECURSION_DESIRED,
          questions: [{ type: 'A', name: domain }],
        });
        try {
          // miekg/dns Exchange: a 2 s read timeout, and the reply must be a response to this query's id.
          const r = dnsPacket.decode(await udpExchange(gwAddr, msg, 2000));
          if (r.type === 'response' && r.id === id) return;
          last = `unexpected DNS message ${JSON.stringify({ type: r.type, id: r.id })}`;
        } catch (err) {
          last = `failed to perform a UDP query: ${(err as Error).message}`;
        }
        if (Date.now() >= deadline) throw new Error(`failed to perform DNS query: ${last}`);
        await sleep(1000);
      }
    });
  },
});
