// Issue 19 (GATEWAY-HTTP extended) as a platform team meets two Gateway features, each a realistic mistake and its fix:
// - GatewayInfrastructurePropagation (GEP-1867, `spec.infrastructure`): the team labels its Gateway `team: payments`
//   for its pod monitors; a label on the Gateway object is not the proxy's: the pods do not carry it. Set in
//   `spec.infrastructure.labels` (and an annotation), it reaches the proxy's Pods, Service and ServiceAccount.
// - GatewayStaticAddresses (GEP-1651, `spec.addresses`): an address a cloud load balancer cannot give (TEST-NET-1,
//   192.0.2.x, outside the lab's load balancer range 127.<lb>.0.0/16) keeps the Gateway from being programmed
//   (Programmed=False/AddressNotUsable, the Service's AddressesAllocated=False saying why); an address of the range is
//   assigned: status.addresses carries it and the Gateway answers there.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectHttpEventually } from '../lab/toolkit/http.ts';
import { waitFor } from '../lab/toolkit/wait.ts';
import { artifactNamespaces, endScenario } from './support/artifacts.ts';
import { gatewayAddress, sampleBackend } from './support/gateway.ts';
import { uniqueName, useLab } from './support/lab.ts';

const GW_API = 'gateway.networking.k8s.io/v1';
const lab = useLab();
const ns = uniqueName('s36-infra');
const host = 's36.example.com';
const PORT = 9436;
const UNUSABLE = '192.0.2.36';
artifactNamespaces(ns);

function gateway(o: { infrastructure?: boolean; address?: string }): string {
  return `
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: ${ns}, labels: {team: payments}}
spec:
  gatewayClassName: gwvendor
${o.infrastructure ? '  infrastructure: {labels: {team: payments}, annotations: {payments.example.com/owner: checkout}}\n' : ''}${o.address ? `  addresses: [{type: IPAddress, value: "${o.address}"}]\n` : ''}  listeners: [{name: http, protocol: HTTP, port: ${PORT}}]
`;
}

const route = `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web, namespace: ${ns}}
spec:
  parentRefs: [{name: gw}]
  hostnames: [${host}]
  rules: [{backendRefs: [{name: sampleapp, port: 8000}]}]
`;

describe('Gateway infrastructure labels and static addresses: each mistake, then its fix', () => {
  /** The address the lab's load balancer gave the Gateway first: the lab's range is 127.<its second octet>.0.0/16. */
  let firstAddress = '';
  beforeAll(async () => {
    await lab.kube.apply(`apiVersion: v1\nkind: Namespace\nmetadata: {name: ${ns}}`);
    await lab.kube.apply(sampleBackend(ns));
    await lab.kube.apply(gateway({}));
    await lab.kube.apply(route);
    await lab.kube.waitForRollout('sampleapp', ns, { timeoutMs: 90_000 });
    await lab.kube.waitForCondition(GW_API, 'Gateway', 'gw', ns, 'Programmed', { timeoutMs: 90_000 });
    await lab.kube.waitForRollout('gw', ns, { timeoutMs: 90_000 });
  });

  // biome-ignore lint/correctness/noEmptyPattern: vitest passes the suite second; the first argument must be a pattern.
  afterAll(async ({}, suite) => {
    await endScenario(lab, suite, [ns]);
  });

  const proxyPods = async () =>
    (await lab.kube.list('v1', 'Pod', ns)).filter(
      (p) => p.metadata?.labels?.['gateway.networking.k8s.io/gateway-name'] === 'gw',
    );

  it("the mistake: a label on the Gateway object is not on the proxy's pods", async () => {
    const pods = await proxyPods();
    expect(pods.length).toBeGreaterThan(0);
    for (const p of pods) expect(p.metadata?.labels?.team).toBeUndefined();
  });

  it('the fix: spec.infrastructure labels and annotations reach the Pods, the Service and the ServiceAccount', async () => {
    await lab.kube.apply(gateway({ infrastructure: true }));
    const pods = await waitFor('proxy pods labelled team=payments', async () => {
      const ps = (await proxyPods()).filter((p) => !p.metadata?.deletionTimestamp);
      return { ok: ps.length > 0 && ps.every((p) => p.metadata?.labels?.team === 'payments'), value: ps, seen: ps };
    });
    for (const p of pods) expect(p.metadata?.annotations?.['payments.example.com/owner']).toBe('checkout');
    for (const kind of ['Service', 'ServiceAccount']) {
      const o = await lab.kube.get('v1', kind, 'gw', ns);
      expect(o?.metadata?.labels?.team, kind).toBe('payments');
      expect(o?.metadata?.annotations?.['payments.example.com/owner'], kind).toBe('checkout');
    }
    // The selector still finds the pods: traffic is served.
    const lb = await gatewayAddress(lab.kube, ns, 'gw', PORT);
    firstAddress = lb.address;
    await expectHttpEventually({ url: `http://${lb.address}:${lb.port}`, path: '/get', host }, { status: 200 });
  });

  it('an address no load balancer can give: Programmed=False AddressNotUsable, the Service says why', async () => {
    await lab.kube.apply(gateway({ infrastructure: true, address: UNUSABLE }));
    const gw = await lab.kube.waitForCondition(GW_API, 'Gateway', 'gw', ns, 'Programmed', {
      status: 'False',
      reason: 'AddressNotUsable',
      timeoutMs: 60_000,
    });
    expect(gw.status.conditions.find((c: any) => c.type === 'Programmed').message).toContain(UNUSABLE);
    const svc = await waitFor('the Service AddressesAllocated=False', async () => {
      const s = await lab.kube.get('v1', 'Service', 'gw', ns);
      const c = s?.status?.conditions?.find((x: any) => x.type === 'AddressesAllocated');
      return { ok: c?.status === 'False', value: c, seen: s?.status };
    });
    expect(svc.message).toContain('outside the lab');
  });

  it('an address of the lab load balancer range: assigned, in status.addresses, and served there', async () => {
    expect(firstAddress).toMatch(/^127\.\d+\./);
    const usable = `127.${firstAddress.split('.')[1]}.250.36`;
    await lab.kube.apply(gateway({ infrastructure: true, address: usable }));
    const gw = await lab.kube.waitForCondition(GW_API, 'Gateway', 'gw', ns, 'Programmed', {
      status: 'True',
      timeoutMs: 60_000,
    });
    await waitFor(`status.addresses to be ${usable}`, async () => {
      const g = await lab.kube.get(GW_API, 'Gateway', 'gw', ns);
      const values = (g?.status?.addresses ?? []).map((a: { value: string }) => a.value);
      return { ok: values.length === 1 && values[0] === usable, seen: values };
    });
    expect(gw.spec.addresses[0].value).toBe(usable);
    const lb = await gatewayAddress(lab.kube, ns, 'gw', PORT);
    expect(lb.address).toBe(usable);
    await expectHttpEventually({ url: `http://${usable}:${lb.port}`, path: '/get', host }, { status: 200 });
  });
});
