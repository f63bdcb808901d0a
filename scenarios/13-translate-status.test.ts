import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { labPaths } from '../lab/state.ts';
import { expectHttpEventually } from '../lab/toolkit/http.ts';
import { waitFor } from '../lab/toolkit/wait.ts';
import { withControlPlaneAdmin } from '../lab/tools/proxies.ts';
import type { StatusReport } from '../lab/tools/status.ts';
import { WATCHED } from '../system/controlplane/kube/watched.ts';
import { artifactNamespaces, collectSuiteFailure } from './support/artifacts.ts';
import { gatewayUrl, namespaceWithGateway, sampleBackend } from './support/gateway.ts';
import { uniqueName, useLab } from './support/lab.ts';
import { runTool } from './support/tools.ts';

const GW_API = 'gateway.networking.k8s.io/v1';
const VENDOR = 'gateway.gwvendor.dev/v1alpha1';
const lab = useLab();
const ns = uniqueName('s13-ok');
const nsBad = uniqueName('s13-bad');
const role = `gwvendor-kube-gateway-api~${ns}~gw`;
const host = 's13.example.com';
artifactNamespaces(ns, nsBad);

const XDS_TYPES = ['listeners', 'routes', 'clusters', 'endpoints'] as const;

/**
 * Everything the control plane watches (system/controlplane/kube/watched.ts), as kubectl resource names. All
 * Deployments are read: the tool, not the test, narrows them to the proxies' (labelled) ones, as the informer does.
 */
const READ_BACK = WATCHED.map((w) => ({ resource: w.resource, optional: 'optional' in w && !!w.optional }));

/** /snapshots/xds's entry for our role once its one proxy has ACKed every type at the snapshot's versions. */
async function ackedSnapshot(): Promise<Record<string, any>> {
  return waitFor(
    `the proxy of ${ns}/gw to ACK every xDS type of its snapshot`,
    async () => {
      const view = await withControlPlaneAdmin(lab.kube, (a) => a.json('/snapshots/xds'));
      const e = view.data?.[role];
      const proxies = Object.values(e?.proxies ?? {}) as any[];
      const acked =
        proxies.length === 1 &&
        XDS_TYPES.every((t) => {
          const st = proxies[0].types?.[t];
          return st?.status === 'ACKED' && st.version_acked === e.type_versions[t];
        });
      return { ok: acked, value: e, seen: e ? { type_versions: e.type_versions, proxies } : view };
    },
    { timeoutMs: 60_000, intervalMs: 300 },
  );
}

/** Only what the comparison may ignore: the address of each endpoint (pods come and go). */
function normalise(type: (typeof XDS_TYPES)[number], resources: any[]): any[] {
  if (type !== 'endpoints') return resources;
  return structuredClone(resources).map((cla: any) => {
    for (const le of cla.endpoints ?? []) {
      for (const lb of le.lb_endpoints ?? []) {
        if (lb.endpoint?.address?.socket_address) lb.endpoint.address.socket_address.address = '<address>';
      }
    }
    return cla;
  });
}

/** A status as written, without what only the status writer adds. */
function withoutTransitionTimes(status: unknown): unknown {
  return JSON.parse(JSON.stringify(status), (k, v) => (k === 'lastTransitionTime' ? undefined : v));
}

describe('translate and lab:status against the lab', () => {
  let url: string;

  beforeAll(async () => {
    await lab.kube.apply(`${namespaceWithGateway(ns)}---
apiVersion: v1
kind: Namespace
metadata: {name: ${nsBad}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web, namespace: ${ns}}
spec:
  parentRefs: [{name: gw}]
  hostnames: [${host}]
  rules:
    - matches: [{path: {type: PathPrefix, value: /api}, headers: [{name: x-env, value: canary}]}]
      filters:
        - {type: RequestHeaderModifier, requestHeaderModifier: {set: [{name: x-from, value: s13}], remove: [x-drop]}}
        - {type: URLRewrite, urlRewrite: {path: {type: ReplacePrefixMatch, replacePrefixMatch: /}}}
      backendRefs: [{name: sampleapp, port: 8000}]
    - matches: [{path: {type: Exact, value: /headers}}, {method: GET, path: {type: PathPrefix, value: /status}}]
      filters: [{type: ResponseHeaderModifier, responseHeaderModifier: {add: [{name: x-route, value: web}]}}]
      backendRefs: [{name: sampleapp, port: 8000}]
    - matches: [{path: {type: PathPrefix, value: /old}}]
      filters: [{type: RequestRedirect, requestRedirect: {path: {type: ReplaceFullPath, replaceFullPath: /headers}, statusCode: 301}}]
---
apiVersion: gateway.gwvendor.dev/v1alpha1
kind: TrafficPolicy
metadata: {name: tp, namespace: ${ns}}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: web}]
  timeouts: {request: 10s}
  headerModifiers: {response: {set: [{name: x-policy, value: tp}]}}
---
# Its backend does not exist: ResolvedRefs=False/BackendNotFound, and its rule answers 500.
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: broken, namespace: ${nsBad}}
spec:
  parentRefs: [{name: gw, namespace: ${ns}}]
  hostnames: [s13-broken.example.com]
  rules: [{backendRefs: [{name: missing, port: 8000}]}]
`);
    await lab.kube.apply(sampleBackend(ns));
    await lab.kube.waitForCondition(GW_API, 'Gateway', 'gw', ns, 'Programmed', { timeoutMs: 90_000 });
    await lab.kube.waitForCondition(GW_API, 'HTTPRoute', 'web', ns, 'ResolvedRefs');
    await lab.kube.waitForCondition(GW_API, 'HTTPRoute', 'broken', nsBad, 'ResolvedRefs', {
      status: 'False',
      reason: 'BackendNotFound',
    });
    await lab.kube.waitForCondition(VENDOR, 'TrafficPolicy', 'tp', ns, 'Attached');
    url = await gatewayUrl(lab.kube, ns, 'gw', 8080);
    // Served end to end (backend Ready, its endpoints in the snapshot) before anything is compared.
    await expectHttpEventually(
      { url, path: '/headers', host },
      { status: 200, headers: { 'x-policy': 'tp', 'x-route': 'web' } },
    );
    await ackedSnapshot();
  });

  // biome-ignore lint/correctness/noEmptyPattern: vitest passes the suite second; the first argument must be a pattern.
  afterAll(async ({}, suite) => {
    await collectSuiteFailure(suite);
    if (process.env.KEEP !== '1') {
      for (const n of [ns, nsBad]) await lab.k(['delete', 'namespace', n, '--wait=false']).catch(() => undefined);
    }
  });

  it('translate of the objects read back from the cluster equals /snapshots/xds and the written statuses', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gwlab-s13-'));
    try {
      // Read the cluster between two looks at the snapshot: equal versions mean the inputs did not move meanwhile.
      const { before, after, out } = await waitFor(
        'a read of the cluster during which the snapshot did not change',
        async () => {
          const before = await ackedSnapshot();
          for (const r of READ_BACK) {
            const got = await lab.kubectl(['get', r.resource, '-A', '-o', 'yaml']);
            // A kind the control plane reads only when the cluster serves it (watched.ts `optional`): none here.
            if (got.code !== 0 && r.optional && /doesn't have a resource type/.test(got.stderr)) continue;
            if (got.code !== 0) throw new Error(`kubectl get ${r.resource} failed: ${got.stderr.trim()}`);
            writeFileSync(join(dir, `${r.resource}.yaml`), got.stdout);
          }
          const after = await ackedSnapshot();
          const out = await runTool(null, 'translate', ['-f', dir, '-o', 'json']);
          return {
            ok: before.version === after.version,
            value: { before, after, out },
            seen: [before.version, after.version],
          };
        },
        { timeoutMs: 60_000 },
      );
      expect(after.version).toBe(before.version);
      expect(out.code, out.stderr).toBe(0);
      // Deployments that are not proxies' (the sample app's) are skipped, as the informer's label selector does.
      expect(out.stderr).toMatch(
        new RegExp(`Deployment ${ns}/sampleapp skipped: the control plane reads only Deployments labelled`),
      );
      const t = JSON.parse(out.stdout);
      expect(Object.keys(t.xds)).toContain(role);
      for (const type of XDS_TYPES) {
        expect(normalise(type, t.xds[role][type]), `${type} of ${role}`).toEqual(normalise(type, after[type]));
      }
      expect(
        t.xds[role].endpoints[0].endpoints[0].lb_endpoints.length,
        'the sample app has an endpoint',
      ).toBeGreaterThan(0);

      // The statuses the control plane wrote, for the resources of this scenario.
      const written: Record<string, unknown> = {
        [`gateways/${ns}/gw`]: (await lab.kube.get(GW_API, 'Gateway', 'gw', ns))?.status,
        [`httproutes/${ns}/web`]: (await lab.kube.get(GW_API, 'HTTPRoute', 'web', ns))?.status,
        [`httproutes/${nsBad}/broken`]: (await lab.kube.get(GW_API, 'HTTPRoute', 'broken', nsBad))?.status,
        [`trafficpolicies/${ns}/tp`]: (await lab.kube.get(VENDOR, 'TrafficPolicy', 'tp', ns))?.status,
      };
      for (const [key, status] of Object.entries(written)) {
        expect(t.status[key], key).toEqual(withoutTransitionTimes(status));
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('lab:status -A: rows of the healthy route, the broken route and the policy, proxy ACKs, exit 1', async () => {
    const t0 = new Date();
    const r = await runTool(lab, 'lab-status', ['-A', '-o', 'json']);
    const t1 = new Date();
    expect(r.code, `${r.stderr}\n${r.stdout.slice(0, 2000)}`).toBe(1);
    const s = JSON.parse(r.stdout) as StatusReport;
    console.log(`lab:status -A -o json: ${r.ms} ms wall (collection ${s.elapsedMs} ms)`);
    const rows = (kind: string, namespace: string, name: string) =>
      s.conditions
        .filter((c) => c.kind === kind && c.namespace === namespace && c.name === name)
        .map((c) => `${c.target} ${c.type}=${c.status}/${c.reason} ${c.health}`);

    expect(rows('Gateway', ns, 'gw')).toEqual([
      'gatewayclass/gwvendor Accepted=True/Accepted ok',
      'gatewayclass/gwvendor Programmed=True/Programmed ok',
    ]);
    expect(rows('HTTPRoute', ns, 'web')).toEqual([
      `gateway/${ns}/gw Accepted=True/Accepted ok`,
      `gateway/${ns}/gw ResolvedRefs=True/ResolvedRefs ok`,
    ]);
    expect(rows('HTTPRoute', nsBad, 'broken')).toEqual([
      `gateway/${ns}/gw Accepted=True/Accepted ok`,
      `gateway/${ns}/gw ResolvedRefs=False/BackendNotFound problem`,
    ]);
    // One row per condition: per ancestor Gateway (the top-level summary repeats them).
    expect(rows('TrafficPolicy', ns, 'tp')).toEqual([
      `gateway/${ns}/gw Accepted=True/Valid ok`,
      `gateway/${ns}/gw Attached=True/Attached ok`,
    ]);
    for (const c of s.conditions.filter((x) => x.namespace === ns || x.namespace === nsBad)) {
      expect(c.observedGeneration, `${c.kind} ${c.name} ${c.type}`).toBe(c.generation);
    }
    expect(s.problems.filter((p) => p.includes(nsBad))).toEqual([
      expect.stringMatching(
        new RegExp(`^HTTPRoute ${nsBad}/broken \\[gateway/${ns}/gw\\] ResolvedRefs=False BackendNotFound`),
      ),
    ]);

    const gw = s.gateways.find((g) => g.namespace === ns && g.name === 'gw');
    expect(gw).toMatchObject({ class: 'gwvendor', listeners: ['http:8080/HTTP'], proxiesReady: 1 });
    expect(url).toContain(gw!.addresses[0]);
    const proxy = s.proxies.rows.filter((p) => p.gateway === `${ns}/gw`);
    expect(proxy.map((p) => p.type).sort()).toEqual(['clusters', 'endpoints', 'listeners', 'routes']);
    for (const p of proxy) {
      expect(p, p.type).toMatchObject({ status: 'ACKED', health: 'ok' });
      expect(p.acked).toBe(p.sent);
    }
    expect(s.controlPlane).toMatchObject({ found: true, validation: 'strict' });
    expect(s.controlPlane.ready).toBe(s.controlPlane.desired);
    expect(s.controlPlane.pods.length).toBeGreaterThan(0);
    expect(s.controlPlane.pods.every((p) => p.ready && p.state === 'Running')).toBe(true);
    // The cluster: its server, version and Ready node(s); the lab record when the tool ran against a lab by name.
    expect(s.cluster.error).toBeUndefined();
    expect(s.cluster.version).toMatch(/^v1\.\d+/);
    expect(s.cluster.server).toMatch(/^https:\/\//);
    expect(s.cluster.nodes.length).toBeGreaterThan(0);
    expect(s.cluster.nodes.every((n) => n.ready)).toBe(true);

    // Read-only: between its start and its end, no request of a non-system user but reads and the port-forward to
    // the control plane's admin (a connect, authorized as create on pods/portforward; nothing is stored).
    const audit = labPaths(lab.name, lab.home).auditLog;
    // The embedded lab always keeps the log; another cluster's may be elsewhere or nowhere.
    if (lab.backend === 'embedded') expect(existsSync(audit), audit).toBe(true);
    if (existsSync(audit)) {
      const mine = readFileSync(audit, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l))
        .filter((l) => new Date(l.ts) >= t0 && new Date(l.ts) <= t1 && !String(l.user).startsWith('system:'));
      expect(mine.length, "the tool's requests are in the request log").toBeGreaterThan(5);
      const writes = mine.filter(
        (l) => !['get', 'list', 'watch'].includes(l.verb) && !(l.verb === 'create' && l.subresource === 'portforward'),
      );
      expect(writes).toEqual([]);
    }
  });

  it('lab:status -n <broken namespace>: the ✗ row in the table, the message with -v, exit 1', async () => {
    const r = await runTool(lab, 'lab-status', ['-n', nsBad]);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stdout).toMatch(
      new RegExp(
        `^\\s*✗\\s+${nsBad}\\s+httproute/broken\\s+gateway/${ns}/gw\\s+ResolvedRefs\\s+False\\s+BackendNotFound\\s+1/1$`,
        'm',
      ),
    );
    expect(r.stdout).toContain('Conditions (namespace');
    expect(r.stdout).toMatch(/✗ 1 problem\(s\):/);
    const v = await runTool(lab, 'lab-status', ['-n', nsBad, '-v']);
    expect(v.code).toBe(1);
    expect(v.stdout).toMatch(/MESSAGE/);
    expect(v.stdout).toMatch(/ResolvedRefs\s+False\s+BackendNotFound\s+1\/1\s+\S.*missing/);
  });

  it('lab:status -n <healthy namespace>: the Gateway, route, policy and ACKed proxy, exit 0', async () => {
    const r = await runTool(lab, 'lab-status', ['-n', ns]);
    expect(r.code, r.stdout).toBe(0);
    expect(r.stdout).toMatch(/✓ no problems/);
    expect(r.stdout).toMatch(new RegExp(`^\\s+${ns}\\s+gw\\s+gwvendor\\s+\\S+\\s+http:8080/HTTP\\s+1/1 ready$`, 'm'));
    expect(r.stdout).toMatch(
      new RegExp(
        `^\\s+${ns}\\s+trafficpolicy/tp\\s+gateway/${ns}/gw\\s+Attached\\s+True\\s+Attached\\s+\\d+/\\d+$`,
        'm',
      ),
    );
    for (const type of XDS_TYPES) {
      expect(r.stdout).toMatch(
        new RegExp(`^\\s+${ns}/gw\\s+gw-\\S+\\.${ns}\\s+${type}\\s+(\\d+)\\s+\\1\\s+ACKED`, 'm'),
      );
    }
    expect(r.stdout).not.toContain(nsBad);
  });
});
