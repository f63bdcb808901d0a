// The debug tools on routes that are healthy or whose backends do not resolve (the section 7 rules, a pod that is not
// running and a NACK are explained in scenarios 05-09, where each state is set up): a healthy route explains as
// healthy with exit code 0; a missing backend Service and a cross-namespace backend without a grant are named with
// the route's reason, and the grant explain prints for the latter resolves it once applied. Last, explain, lab:status
// and lab:bundle are shown to make no write to the cluster, by the embedded API server's request log.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { labPaths } from '../lab/state.ts';
import { expectHttpEventually } from '../lab/toolkit/http.ts';
import { artifactNamespaces, collectSuiteFailure } from './support/artifacts.ts';
import { gatewayUrl, namespaceWithGateway, sampleBackend } from './support/gateway.ts';
import { uniqueName, useLab } from './support/lab.ts';
import { explainJson, runTool } from './support/tools.ts';

const GW_API = 'gateway.networking.k8s.io/v1';
const lab = useLab();
const ns = uniqueName('s11-explain');
const other = uniqueName('s11-backends');
artifactNamespaces(ns, other);

const route = (name: string, backendRef: string) => `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: ${name}, namespace: ${ns}}
spec:
  parentRefs: [{name: gw}]
  hostnames: [${name}.s11.example.com]
  rules: [{backendRefs: [${backendRef}]}]
`;

describe('explain: healthy and unresolved routes; the tools write nothing', () => {
  let url: string;

  beforeAll(async () => {
    await lab.kube.apply(`${namespaceWithGateway(ns)}---
apiVersion: v1
kind: Namespace
metadata: {name: ${other}}
---
${route('healthy', '{name: sampleapp, port: 8000}')}
---
${route('missing', '{name: no-such-service, port: 8000}')}
---
${route('elsewhere', `{name: sampleapp, namespace: ${other}, port: 8000}`)}
`);
    await lab.kube.apply([...sampleBackend(ns), ...sampleBackend(other)]);
    await lab.kube.waitForCondition(GW_API, 'Gateway', 'gw', ns, 'Programmed', { timeoutMs: 60_000 });
    url = await gatewayUrl(lab.kube, ns, 'gw', 8080);
    await expectHttpEventually({ url, path: '/headers', host: 'healthy.s11.example.com' }, { status: 200 });
    await lab.kube.waitForCondition(GW_API, 'HTTPRoute', 'missing', ns, 'ResolvedRefs', { status: 'False' });
  });

  // biome-ignore lint/correctness/noEmptyPattern: vitest passes the suite second; the first argument must be a pattern.
  afterAll(async ({}, suite) => {
    await collectSuiteFailure(suite);
    if (process.env.KEEP === '1') return;
    for (const n of [ns, other]) await lab.k(['delete', 'namespace', n, '--wait=false']).catch(() => undefined);
  });

  it('a healthy route explains as healthy, with exit code 0', async () => {
    const text = await runTool(lab, 'explain', ['httproute/healthy', '-n', ns]);
    expect(text.code, text.stdout + text.stderr).toBe(0);
    expect(text.stdout).toMatch(new RegExp(`^HTTPRoute ${ns}/healthy: healthy\\n`));
    const { report } = await explainJson(lab, 'httproute/healthy', ns);
    expect(report.findings.map((f: any) => f.message)).toEqual(
      expect.arrayContaining([`accepted by Gateway ${ns}/gw`, 'backends resolved']),
    );
    expect(report.proxies[0].pods[0]).toMatchObject({ ready: true, configRead: true });
  });

  it('a missing backend Service is named with the route reason BackendNotFound', async () => {
    const { code, report, run } = await explainJson(lab, 'httproute/missing', ns);
    expect(code, run.stdout).toBe(1);
    const problems = report.findings.filter((f: any) => f.level === 'problem');
    expect(problems.map((f: any) => f.message)).toEqual([
      `backends do not resolve: ResolvedRefs=False (BackendNotFound): spec.rules[0].backendRefs[0]: Service ${ns}/no-such-service not found`,
    ]);
    // The proxy answers such a rule with 500, as Gateway API asks.
    await expectHttpEventually({ url, path: '/headers', host: 'missing.s11.example.com' }, { status: 500 });
  });

  it('a cross-namespace backend without a grant: the printed ReferenceGrant resolves it', async () => {
    const before = await explainJson(lab, 'httproute/elsewhere', ns);
    expect(before.code, before.run.stdout).toBe(1);
    const f = before.report.findings.find((x: any) => x.level === 'problem');
    expect(f.message).toContain('ResolvedRefs=False (RefNotPermitted)');
    expect(f.yaml).toContain(`namespace: ${other}`);
    await lab.k(['apply', '-f', '-'], f.yaml);
    await lab.kube.waitForCondition(GW_API, 'HTTPRoute', 'elsewhere', ns, 'ResolvedRefs');
    await expectHttpEventually({ url, path: '/headers', host: 'elsewhere.s11.example.com' }, { status: 200 });
    const after = await explainJson(lab, 'httproute/elsewhere', ns);
    expect(after.code, after.run.stdout).toBe(0);
  });

  // Issue 17 point 4: a policy on a route overriding the Gateway's is the designed precedence (route > gateway, before
  // age), which explain renders from the control plane's own decision: healthy from the route and from the policy,
  // and the Gateway policy, applied to the other routes as its status says, is no status/config disagreement.
  it('a route policy overriding the Gateway policy: explain agrees from both sides, exit 0', async () => {
    const tp = (name: string, target: string, value: string) => `
apiVersion: gateway.gwvendor.dev/v1alpha1
kind: TrafficPolicy
metadata: {name: ${name}, namespace: ${ns}}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, ${target}}]
  headerModifiers: {response: {set: [{name: x-policy, value: ${value}}]}}
`;
    // The Gateway's policy is created first: by age alone it would win on the route too.
    await lab.kube.apply(tp('on-gateway', 'kind: Gateway, name: gw', 'gateway'));
    await lab.kube.apply(tp('on-route', 'kind: HTTPRoute, name: healthy', 'route'));
    await expectHttpEventually(
      { url, path: '/headers', host: 'healthy.s11.example.com' },
      {
        status: 200,
        headers: { 'x-policy': 'route' },
      },
    );
    await expectHttpEventually(
      { url, path: '/headers', host: 'elsewhere.s11.example.com' },
      {
        status: 200,
        headers: { 'x-policy': 'gateway' },
      },
    );
    const fromRoute = await explainJson(lab, 'httproute/healthy', ns);
    const fromPolicy = await explainJson(lab, 'trafficpolicy/on-gateway', ns);
    for (const r of [fromRoute, fromPolicy]) {
      expect(r.code, r.run.stdout).toBe(0);
      expect(
        r.report.findings.filter((f: any) => f.level === 'problem' || f.disagreement),
        r.run.stdout,
      ).toEqual([]);
      const gwPolicy = r.report.policies.find((p: any) => p.policy === `${ns}/on-gateway`);
      expect(gwPolicy.decision[0].lostTo, r.run.stdout).toEqual([
        {
          winner: `TrafficPolicy/${ns}/on-route`,
          rule: 'more specific',
          level: 'route',
          routes: [`${ns}/healthy`],
        },
      ]);
    }
    expect(fromRoute.report.policies.find((p: any) => p.policy === `${ns}/on-gateway`).verdict).toBe('not applied');
    expect(fromPolicy.report.policies[0].verdict).toBe('applied');
  });

  it('explain, lab:status and lab:bundle make no write to the cluster (the API server request log)', async (ctx) => {
    if (lab.backend !== 'embedded') ctx.skip();
    const auditLog = labPaths(lab.name, lab.home).auditLog;
    const out = mkdtempSync(join(tmpdir(), 'gwlab-s11-'));
    try {
      const since = new Date().toISOString();
      const runs = [
        await runTool(lab, 'explain', ['httproute/missing', '-n', ns]),
        await runTool(lab, 'lab-status', ['-A']),
        await runTool(lab, 'lab-bundle', ['-o', join(out, 'bundle.tar.gz')]),
      ];
      // They ran and read (explain and status exit 1 here: the namespace has a broken route).
      expect(runs.map((r) => r.code)).toEqual([1, 1, 0]);
      // The request log is written at the end of each event-loop turn: wait for the lines of the last requests.
      await new Promise((r) => setTimeout(r, 300));
      // The log may have rotated to <file>.1 meanwhile: read both.
      const text = [`${auditLog}.1`, auditLog].map((f) => (existsSync(f) ? readFileSync(f, 'utf8') : '')).join('');
      const lines = text
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l))
        .filter((l) => l.ts >= since && l.user === 'gwlab-admin');
      const reads = lines.filter((l) => ['get', 'list', 'watch'].includes(l.verb));
      // Port-forwards are `create pods/portforward` (as RBAC sees them) but change nothing stored.
      const writes = lines.filter((l) => !['get', 'list', 'watch'].includes(l.verb) && l.subresource !== 'portforward');
      expect(reads.length).toBeGreaterThan(20);
      expect(lines.some((l) => l.subresource === 'portforward')).toBe(true);
      expect(writes).toEqual([]);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});
