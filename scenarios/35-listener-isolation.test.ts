// Issue 19 (GATEWAY-HTTP extended): a listener isolation mistake as users make it, shown by explain and fixed.
// A Gateway with two HTTP listeners on one port: `any` (no hostname) and `apps` (*.s35.example.com). A "catch-all"
// HTTPRoute serving /legacy is attached to `any` only (sectionName), expecting to serve every host; but a request
// for web.s35.example.com/legacy is 404: the more specific listener `apps` owns that host, and its virtual host does
// not have the route (Gateway API's Listener isolation, conformance GatewayHTTPListenerIsolation). Another host still
// gets /legacy. explain httproute/legacy says which hosts a more specific listener takes and the parentRef that
// would serve them; with that parentRef added, web.s35.example.com/legacy answers 200 and the note is gone.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectHttpEventually } from '../lab/toolkit/http.ts';
import { artifactNamespaces, endScenario } from './support/artifacts.ts';
import { gatewayUrl, sampleBackend } from './support/gateway.ts';
import { uniqueName, useLab } from './support/lab.ts';
import { explainJson } from './support/tools.ts';

const GW_API = 'gateway.networking.k8s.io/v1';
const lab = useLab();
const ns = uniqueName('s35-isolation');
const PORT = 9435;
const appHost = 'web.s35.example.com';
artifactNamespaces(ns);

const gateway = `
apiVersion: v1
kind: Namespace
metadata: {name: ${ns}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: ${ns}}
spec:
  gatewayClassName: gwvendor
  listeners:
  - {name: any, protocol: HTTP, port: ${PORT}}
  - {name: apps, protocol: HTTP, port: ${PORT}, hostname: "*.s35.example.com"}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: apps, namespace: ${ns}}
spec:
  parentRefs: [{name: gw, sectionName: apps}]
  rules: [{matches: [{path: {type: PathPrefix, value: /headers}}], backendRefs: [{name: sampleapp, port: 8000}]}]
`;

const legacy = (sections: string[]) => `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: legacy, namespace: ${ns}}
spec:
  parentRefs: [${sections.map((s) => `{name: gw, sectionName: ${s}}`).join(', ')}]
  rules: [{matches: [{path: {type: PathPrefix, value: /legacy}}], filters: [{type: URLRewrite, urlRewrite: {path: {type: ReplacePrefixMatch, replacePrefixMatch: /anything}}}], backendRefs: [{name: sampleapp, port: 8000}]}]
`;

describe('listener isolation: a catch-all route on the hostname-less listener misses the hosts of a wildcard one', () => {
  let url: string;

  beforeAll(async () => {
    await lab.kube.apply(gateway);
    await lab.kube.apply(sampleBackend(ns));
    await lab.kube.apply(legacy(['any']));
    await lab.kube.waitForRollout('sampleapp', ns, { timeoutMs: 90_000 });
    await lab.kube.waitForCondition(GW_API, 'Gateway', 'gw', ns, 'Programmed', { timeoutMs: 90_000 });
    url = await gatewayUrl(lab.kube, ns, 'gw', PORT);
    await expectHttpEventually({ url, path: '/legacy/x', host: 'old.example.org' }, { status: 200 });
  });

  // biome-ignore lint/correctness/noEmptyPattern: vitest passes the suite second; the first argument must be a pattern.
  afterAll(async ({}, suite) => {
    await endScenario(lab, suite, [ns]);
  });

  it('the bug: /legacy answers for another host, but 404 for a host the wildcard listener owns', async () => {
    await expectHttpEventually({ url, path: '/legacy/x', host: 'old.example.org' }, { status: 200 });
    await expectHttpEventually({ url, path: '/legacy/x', host: appHost }, { status: 404 });
    // The wildcard listener's own route serves that host.
    await expectHttpEventually({ url, path: '/headers', host: appHost }, { status: 200 });
  });

  it('explain names the listener that takes those hosts and the parentRef that would serve them', async () => {
    const { report, run } = await explainJson(lab, 'httproute/legacy', ns);
    const notes = report.findings.filter((f: any) => f.level === 'note' && f.message.includes('listener isolation'));
    expect(notes, run.stdout).toHaveLength(1);
    expect(notes[0].subject).toBe(`HTTPRoute ${ns}/legacy`);
    expect(notes[0].message).toContain(
      `requests for *.s35.example.com on port ${PORT} go to listener apps (*.s35.example.com), more specific than listener any (any host)`,
    );
    expect(notes[0].details).toEqual(['to serve them too, add a parentRef {name: gw, sectionName: apps} to the route']);
    expect(run.stdout).toContain('listener isolation');
  });

  it('the fix: attached to both listeners, /legacy answers for the wildcard host too and explain has no note', async () => {
    await lab.kube.apply(legacy(['any', 'apps']));
    await expectHttpEventually({ url, path: '/legacy/x', host: appHost }, { status: 200 });
    await expectHttpEventually({ url, path: '/legacy/x', host: 'old.example.org' }, { status: 200 });
    const { report, run } = await explainJson(lab, 'httproute/legacy', ns);
    expect(
      report.findings.filter((f: any) => f.message.includes('listener isolation')),
      run.stdout,
    ).toHaveLength(0);
  });
});
