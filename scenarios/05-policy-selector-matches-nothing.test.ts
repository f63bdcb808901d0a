// Contract section 7, rule 1: a TrafficPolicy whose label selector matches no HTTPRoute and no Gateway attaches
// nothing. It reads Accepted (it is valid), yet nothing of it reaches the proxy: config_dump has no trace of it and
// traffic is unchanged; its status says that no target matched. After the route's labels are fixed, it is applied.
// Verdicts about "applied" come from the proxy (config_dump provenance and traffic); statuses are asserted apart.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AdminSession, configDump, findRoutes, openProxyAdmin } from '../lab/toolkit/admin.ts';
import { expectHttpEventually } from '../lab/toolkit/http.ts';
import { waitFor } from '../lab/toolkit/wait.ts';
import { artifactNamespaces, collectSuiteFailure } from './support/artifacts.ts';
import { gatewayUrl, namespaceWithGateway, sampleBackend } from './support/gateway.ts';
import { uniqueName, useLab } from './support/lab.ts';
import { explainJson, runTool } from './support/tools.ts';

const GW_API = 'gateway.networking.k8s.io/v1';
const VENDOR = 'gateway.gwvendor.dev/v1alpha1';
const lab = useLab();
const ns = uniqueName('s05-selector');
const host = 's05.example.com';
const policyRef = `TrafficPolicy/${ns}/by-label`;
artifactNamespaces(ns);

describe('policy rule 1: a label selector that matches nothing', () => {
  let admin: AdminSession;
  let url: string;

  beforeAll(async () => {
    await lab.kube.apply(`${namespaceWithGateway(ns)}---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web, namespace: ${ns}, labels: {app: web}}
spec:
  parentRefs: [{name: gw}]
  hostnames: [${host}]
  rules: [{backendRefs: [{name: sampleapp, port: 8000}]}]
---
# The selector has a typo (webb): it matches no HTTPRoute and no Gateway.
apiVersion: gateway.gwvendor.dev/v1alpha1
kind: TrafficPolicy
metadata: {name: by-label, namespace: ${ns}}
spec:
  targetSelectors: [{group: gateway.networking.k8s.io, kind: HTTPRoute, matchLabels: {app: webb}}]
  headerModifiers: {response: {set: [{name: x-policy, value: by-label}]}}
`);
    await lab.kube.apply(sampleBackend(ns));
    await lab.kube.waitForCondition(GW_API, 'Gateway', 'gw', ns, 'Programmed', { timeoutMs: 60_000 });
    url = await gatewayUrl(lab.kube, ns, 'gw', 8080);
    admin = await openProxyAdmin(lab.kube, { namespace: ns, name: 'gw' });
    // The route serves before anything is judged, so "absent" below cannot mean "not there yet".
    await expectHttpEventually({ url, path: '/headers', host }, { status: 200 });
  });

  // biome-ignore lint/correctness/noEmptyPattern: vitest passes the suite second; the first argument must be a pattern.
  afterAll(async ({}, suite) => {
    await collectSuiteFailure(suite);
    await admin?.close();
    if (process.env.KEEP !== '1') await lab.k(['delete', 'namespace', ns, '--wait=false']).catch(() => undefined);
  });

  it('reads Accepted, with no ancestors and Attached=False/TargetNotFound naming the selector', async () => {
    const p = await lab.kube.waitForCondition(VENDOR, 'TrafficPolicy', 'by-label', ns, 'Attached', {
      status: 'False',
      reason: 'TargetNotFound',
    });
    const top = p.status.conditions as Array<{ type: string; status: string; message: string }>;
    expect(top.find((c) => c.type === 'Accepted')?.status).toBe('True');
    expect(top.find((c) => c.type === 'Attached')?.message).toMatch(/no target .*matches.*app=webb/);
    expect(p.status.ancestors ?? []).toEqual([]);
    // What a user sees with kubectl.
    const yaml = await lab.k(['get', 'trafficpolicy', 'by-label', '-n', ns, '-o', 'yaml']);
    expect(yaml).toContain('TargetNotFound');
  });

  it('is absent from config_dump and from traffic', async () => {
    const hits = findRoutes(await configDump(admin), { host, path: '/headers' });
    expect(hits.length, 'the route of the HTTPRoute is in config_dump').toBeGreaterThan(0);
    for (const h of hits) {
      expect(Object.values(h.provenance)).not.toContain(policyRef);
      expect(JSON.stringify(h.route)).not.toContain('x-policy');
    }
    await expectHttpEventually({ url, path: '/headers', host }, { status: 200, headers: { 'x-policy': null } });
  });

  it('explain names rule 1 for the policy and for the route it nearly selects, with the labels on both sides', async () => {
    const { code, report, run } = await explainJson(lab, 'trafficpolicy/by-label', ns);
    expect(code, run.stdout).toBe(1);
    const f = report.findings.find((x: any) => x.level === 'problem');
    expect(f, run.stdout).toMatchObject({ rule: 1, subject: `TrafficPolicy ${ns}/by-label` });
    expect(f.details).toContain(`it selects HTTPRoutes in namespace ${ns} labelled app=webb`);
    expect(f.details).toContain('  HTTPRoute web has app=web');
    // Accepted is not applied: the verdict comes from config_dump, and says so next to the status.
    expect(report.policies[0]).toMatchObject({ verdict: 'not applied', notApplied: ['headerModifiers'] });
    expect(report.findings.some((x: any) => /Accepted only means the policy is valid/.test(x.message))).toBe(true);
    const fromRoute = await explainJson(lab, 'httproute/web', ns);
    expect(fromRoute.code, fromRoute.run.stdout).toBe(1);
    expect(fromRoute.report.findings.filter((x: any) => x.level === 'problem').map((x: any) => x.rule)).toEqual([1]);
    // The text form a person reads.
    const text = await runTool(lab, 'explain', ['trafficpolicy/by-label', '-n', ns]);
    expect(text.stdout).toContain(`TrafficPolicy ${ns}/by-label: 1 problem`);
    expect(text.stdout).toContain('[rule 1]');
  });

  it('after the route is labelled to match: applied in config_dump and traffic, Attached=True', async () => {
    await lab.k(['label', 'httproute', 'web', '-n', ns, 'app=webb', '--overwrite']);
    const hit = await waitFor(`config_dump route for ${host} to name ${policyRef}`, async () => {
      const hits = findRoutes(await configDump(admin), { host, path: '/headers' });
      return { ok: hits[0]?.provenance.headerModifiers === policyRef, value: hits[0], seen: hits[0]?.provenance };
    });
    expect(JSON.stringify(hit.route.response_headers_to_add ?? [])).toContain('x-policy');
    await expectHttpEventually({ url, path: '/headers', host }, { status: 200, headers: { 'x-policy': 'by-label' } });
    const p = await lab.kube.waitForCondition(VENDOR, 'TrafficPolicy', 'by-label', ns, 'Attached', {
      reason: 'Attached',
    });
    expect(p.status.ancestors.map((a: any) => `${a.ancestorRef.kind}/${a.ancestorRef.name}`)).toContain('Gateway/gw');
    const fixed = await explainJson(lab, 'trafficpolicy/by-label', ns);
    expect(fixed.code, fixed.run.stdout).toBe(0);
    expect(fixed.report.policies[0]).toMatchObject({ verdict: 'applied', applied: ['headerModifiers'] });
  });
});
