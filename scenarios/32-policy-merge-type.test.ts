// Issue 13 point 5, "the precedence users hit": a platform team's Gateway policy sets request headers (x-env, x-team)
// and a response header; an app team's HTTPRoute policy sets x-team only. By default the route policy's headerModifiers
// replace the Gateway's whole (the more specific wins the field: x-env and the response header are gone — the bug
// users report). With `mergeType: StrategicMerge` (Envoy Gateway's BackendTrafficPolicy mergeType; kgateway's deep
// merge of sub-fields, kgateway issue #11528) the two merge field by field: x-team from the route, x-env and the
// response header from the Gateway, provenance naming both, both policies Attached=True/Merged, explain printing the
// control plane's decision (attach-policies.ts). Flipped to JSONMerge (RFC 7386), the request `set` list replaces as
// a whole: x-env goes, the response header stays. Unset again, the Gateway policy is Overridden. A mergeType outside
// the enum is refused by the CRD with a Status naming spec.mergeType.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AdminSession, configDump, findRoutes, openProxyAdmin } from '../lab/toolkit/admin.ts';
import { expectHttpEventually, type HttpResponse } from '../lab/toolkit/http.ts';
import { waitFor } from '../lab/toolkit/wait.ts';
import { artifactNamespaces, collectSuiteFailure } from './support/artifacts.ts';
import { gatewayUrl, gatewayWithRoute, sampleBackend } from './support/gateway.ts';
import { uniqueName, useLab } from './support/lab.ts';
import { explainJson, runTool } from './support/tools.ts';

const GW_API = 'gateway.networking.k8s.io/v1';
const VENDOR = 'gateway.gwvendor.dev/v1alpha1';
const lab = useLab();
const ns = uniqueName('s32-merge');
const host = 's32.example.com';
const ref = (name: string) => `TrafficPolicy/${ns}/${name}`;
const MERGED = `${ref('route-team')}+${ref('gateway-defaults')}`;
artifactNamespaces(ns);

const gatewayPolicy = `
apiVersion: gateway.gwvendor.dev/v1alpha1
kind: TrafficPolicy
metadata: {name: gateway-defaults, namespace: ${ns}}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: Gateway, name: gw}]
  headerModifiers:
    request: {set: [{name: x-env, value: prod}, {name: x-team, value: platform}]}
    response: {add: [{name: x-served-by, value: gateway}]}
`;
const routePolicy = (mergeType?: string) => `
apiVersion: gateway.gwvendor.dev/v1alpha1
kind: TrafficPolicy
metadata: {name: route-team, namespace: ${ns}}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: web}]
${mergeType ? `  mergeType: ${mergeType}\n` : ''}  headerModifiers:
    request: {set: [{name: x-team, value: checkout}]}
`;

/** The request headers the sample application saw (httpbin's /headers: name → values). */
const seen = (res: HttpResponse, name: string): string | undefined => {
  const h = res.json?.headers ?? {};
  const k = Object.keys(h).find((x) => x.toLowerCase() === name);
  return k === undefined ? undefined : [h[k]].flat().join(',');
};
const requestHeaders =
  (want: Record<string, string | undefined>) =>
  (res: HttpResponse): string | undefined => {
    for (const [name, value] of Object.entries(want)) {
      if (seen(res, name) !== value) return `backend saw ${name}=${seen(res, name)}, want ${value}`;
    }
    return undefined;
  };

describe('policy merge: a route policy and a Gateway policy merging field by field (mergeType)', () => {
  let admin: AdminSession;
  let url: string;
  const req = () => ({ url, path: '/headers', host });

  async function provenanceIs(want: string): Promise<void> {
    await waitFor(`config_dump route for ${host} to take headerModifiers from ${want}`, async () => {
      const hits = findRoutes(await configDump(admin), { host, path: '/headers' });
      return {
        ok: hits.length > 0 && hits.every((h) => h.provenance.headerModifiers === want),
        seen: hits.map((h) => h.provenance),
      };
    });
  }

  beforeAll(async () => {
    await lab.kube.apply(gatewayWithRoute(ns, host));
    await lab.kube.apply(sampleBackend(ns));
    await lab.kube.apply(gatewayPolicy);
    await lab.kube.apply(routePolicy());
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

  it('by default the route policy replaces the Gateway policy headerModifiers whole: the bug as users meet it', async () => {
    await provenanceIs(ref('route-team'));
    await expectHttpEventually(req(), {
      headers: { 'x-served-by': null },
      check: requestHeaders({ 'x-team': 'checkout', 'x-env': undefined }),
    });
    await lab.kube.waitForCondition(VENDOR, 'TrafficPolicy', 'gateway-defaults', ns, 'Attached', {
      status: 'False',
      reason: 'Overridden',
    });
  });

  it('StrategicMerge: headers merge by name, the response header stays, provenance names both', async () => {
    await lab.kube.apply(routePolicy('StrategicMerge'));
    await provenanceIs(MERGED);
    await expectHttpEventually(req(), {
      headers: { 'x-served-by': 'gateway' },
      check: requestHeaders({ 'x-team': 'checkout', 'x-env': 'prod' }),
    });
    for (const name of ['gateway-defaults', 'route-team']) {
      const p = await lab.kube.waitForCondition(VENDOR, 'TrafficPolicy', name, ns, 'Attached', {
        status: 'True',
        reason: 'Merged',
      });
      const attached = p.status.ancestors[0].conditions.find((c: { type: string }) => c.type === 'Attached');
      expect(attached.message).toContain(`headerModifiers as ${MERGED}`);
    }
  });

  it('explain prints each policy field decision as the control plane made it: merged under the route policy', async () => {
    const { code, report, run } = await explainJson(lab, 'httproute/web', ns);
    expect(code, run.stdout).toBe(0);
    const byName = Object.fromEntries(report.policies.map((p: any) => [p.policy, p]));
    expect(byName[`${ns}/gateway-defaults`]).toMatchObject({ verdict: 'applied', applied: ['headerModifiers'] });
    expect(byName[`${ns}/gateway-defaults`].decision, run.stdout).toEqual([
      {
        field: 'headerModifiers',
        wonOn: [],
        lostTo: [
          {
            winner: ref('route-team'),
            rule: 'merged',
            level: 'route',
            mergeType: 'StrategicMerge',
            routes: [`${ns}/web`],
          },
        ],
      },
    ]);
    expect(byName[`${ns}/route-team`].decision, run.stdout).toEqual([
      {
        field: 'headerModifiers',
        wonOn: [`${ns}/web`],
        lostTo: [],
        merges: [{ policies: MERGED, routes: [`${ns}/web`] }],
      },
    ]);
    const text = await runTool(lab, 'explain', ['httproute/web', '-n', ns]);
    expect(text.stdout).toContain(
      `rules    headerModifiers: merged under ${ref('route-team')} (StrategicMerge) on ${ns}/web`,
    );
  });

  it('flipped to JSONMerge: the request set list replaces as a whole (x-env gone), the response header stays', async () => {
    await lab.kube.apply(routePolicy('JSONMerge'));
    await expectHttpEventually(req(), {
      headers: { 'x-served-by': 'gateway' },
      check: requestHeaders({ 'x-team': 'checkout', 'x-env': undefined }),
    });
    await provenanceIs(MERGED);
    const { report, run } = await explainJson(lab, 'httproute/web', ns);
    const gw = report.policies.find((p: any) => p.policy === `${ns}/gateway-defaults`);
    expect(gw.decision[0].lostTo[0], run.stdout).toMatchObject({ rule: 'merged', mergeType: 'JSONMerge' });
  });

  it('mergeType unset again: the route policy replaces, the Gateway policy reads Overridden', async () => {
    await lab.k([
      'patch',
      'trafficpolicy',
      'route-team',
      '-n',
      ns,
      '--type=merge',
      '-p',
      '{"spec":{"mergeType":null}}',
    ]);
    await provenanceIs(ref('route-team'));
    await expectHttpEventually(req(), {
      headers: { 'x-served-by': null },
      check: requestHeaders({ 'x-team': 'checkout', 'x-env': undefined }),
    });
    await lab.kube.waitForCondition(VENDOR, 'TrafficPolicy', 'gateway-defaults', ns, 'Attached', {
      status: 'False',
      reason: 'Overridden',
    });
  });

  it('a mergeType outside the enum is refused with a Status naming spec.mergeType; nothing is stored', async () => {
    const bad = routePolicy('DeepMerge').replace('name: route-team', 'name: bad-merge');
    await expect(lab.kube.apply(bad)).rejects.toThrow(/spec\.mergeType: Unsupported value: .*DeepMerge/);
    expect(await lab.kube.get(VENDOR, 'TrafficPolicy', 'bad-merge', ns)).toBeUndefined();
  });
});
