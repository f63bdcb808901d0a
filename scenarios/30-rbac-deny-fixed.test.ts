// Issue 13 item 4, rbac: a platform team blocks a scanner network and a scanner's User-Agent at the Gateway with a
// TrafficPolicy `rbac` (action Deny). The bug users hit: the network written as 0.0.0.0/0 instead of its /24 — every
// client now gets Envoy's RBAC answer, 403 `RBAC: access denied`, counted in the proxy's rbac.denied, the Deny rules
// visible in config_dump with the policy as their provenance. Fixed to 203.0.113.0/24: ordinary clients get through;
// a client from that network (its address in x-forwarded-for, which the gateway's HCM trusts as Envoy does with no
// trusted hops) and a `sqlmap` User-Agent still get 403. A CIDR that is not one is refused by the API server with a
// Status naming the field (the CRD's isCIDR rule), nothing stored.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AdminSession, configDump, findRoutes, openProxyAdmin } from '../lab/toolkit/admin.ts';
import { expectHttpEventually } from '../lab/toolkit/http.ts';
import { artifactNamespaces, collectSuiteFailure } from './support/artifacts.ts';
import { gatewayUrl, gatewayWithRoute, sampleBackend } from './support/gateway.ts';
import { uniqueName, useLab } from './support/lab.ts';

const GW_API = 'gateway.networking.k8s.io/v1';
const lab = useLab();
const ns = uniqueName('s30-rbac');
const host = 's30.example.com';
artifactNamespaces(ns);

const policy = (network: string) => `
apiVersion: gateway.gwvendor.dev/v1alpha1
kind: TrafficPolicy
metadata: {name: block-scanners, namespace: ${ns}}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]
  rbac:
    action: Deny
    policies:
      - name: scanner-net
        principals: [{remoteIp: "${network}"}]
      - name: scanner-agent
        permissions: [{header: {name: User-Agent, prefix: sqlmap}}]
`;

describe('rbac: a Deny policy that blocks everyone, then fixed', () => {
  let admin: AdminSession;
  let url: string;
  const req = (headers: Record<string, string> = {}) => ({ url, path: '/get', host, headers });

  beforeAll(async () => {
    await lab.kube.apply(gatewayWithRoute(ns, host));
    await lab.kube.apply(sampleBackend(ns));
    await lab.kube.apply(policy('0.0.0.0/0'));
    await lab.kube.waitForCondition(GW_API, 'Gateway', 'gw', ns, 'Programmed', { timeoutMs: 60_000 });
    url = await gatewayUrl(lab.kube, ns, 'gw', 8080);
    admin = await openProxyAdmin(lab.kube, { namespace: ns, name: 'gw' });
  });

  // biome-ignore lint/correctness/noEmptyPattern: vitest passes the suite second; the first argument must be a pattern.
  afterAll(async ({}, suite) => {
    await collectSuiteFailure(suite);
    await admin?.close();
    if (process.env.KEEP !== '1') await lab.k(['delete', 'namespace', ns, '--wait=false']).catch(() => undefined);
  });

  it('0.0.0.0/0: every client gets 403 RBAC: access denied; rbac.denied counts; config_dump shows the Deny rules', async () => {
    await expectHttpEventually(req(), { status: 403, body: 'RBAC: access denied' });
    const stats = await admin.get('/stats?filter=rbac');
    expect(stats.text).toMatch(/http\.[^ ]*rbac\.denied: [1-9]/);
    const hits = findRoutes(await configDump(admin), { host, path: '/get' });
    expect(hits.map((h) => h.provenance.rbac)).toEqual([`TrafficPolicy/${ns}/block-scanners`]);
    const rules = (hits[0]!.route.typed_per_filter_config as any)['envoy.filters.http.rbac'].rbac.rules;
    expect(rules.action).toBe('DENY');
    expect(rules.policies['scanner-net'].principals).toEqual([
      { remote_ip: { address_prefix: '0.0.0.0', prefix_len: 0 } },
    ]);
  });

  it('fixed to 203.0.113.0/24: ordinary clients 200; that network and the sqlmap agent still 403', async () => {
    await lab.kube.apply(policy('203.0.113.0/24'));
    await expectHttpEventually(req(), { status: 200 });
    await expectHttpEventually(req({ 'x-forwarded-for': '203.0.113.7' }), { status: 403, body: 'RBAC: access denied' });
    await expectHttpEventually(req({ 'x-forwarded-for': '198.51.100.7' }), { status: 200 });
    await expectHttpEventually(req({ 'user-agent': 'sqlmap/1.8' }), { status: 403, body: 'RBAC: access denied' });
  });

  it('a CIDR that is not one is refused by the API server, naming the field; nothing stored', async () => {
    const bad = policy('203.0.113.300/24').replace('block-scanners', 'typo');
    await expect(lab.kube.apply(bad)).rejects.toThrow(
      /spec\.rbac\.policies\[0\]\.principals\[0\]\.remoteIp: .*must be a CIDR/,
    );
    const r = await lab.kubectl(['get', 'trafficpolicy', 'typo', '-n', ns]);
    expect(r.stderr).toContain('NotFound');
  });
});
