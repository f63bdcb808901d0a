// Contract section 7, rule 2: when several TrafficPolicies target the same HTTPRoute through targetRefs, only the
// oldest is applied (interfaces.md: per setting, the older creationTimestamp wins, then namespace/name). Both policies
// here set the same response header, so the loser loses everything: it reads Attached=False/Overridden naming the
// winner. The older one is named so that name order alone would pick the newer one, so only age can explain the
// verdict. Deleting the oldest applies the newer. Verdicts come from config_dump provenance and from traffic.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AdminSession, configDump, findRoutes, openProxyAdmin } from '../lab/toolkit/admin.ts';
import { expectHttpEventually } from '../lab/toolkit/http.ts';
import type { KObj } from '../lab/toolkit/kube.ts';
import { waitFor } from '../lab/toolkit/wait.ts';
import { artifactNamespaces, collectSuiteFailure } from './support/artifacts.ts';
import { gatewayUrl, gatewayWithRoute, sampleBackend } from './support/gateway.ts';
import { uniqueName, useLab } from './support/lab.ts';
import { explainJson } from './support/tools.ts';

const GW_API = 'gateway.networking.k8s.io/v1';
const VENDOR = 'gateway.gwvendor.dev/v1alpha1';
const lab = useLab();
const ns = uniqueName('s06-oldest');
const host = 's06.example.com';
// "z-older" sorts after "a-newer": were age ignored, the namespace/name tie-break would pick a-newer.
const OLDER = 'z-older';
const NEWER = 'a-newer';
const ref = (name: string) => `TrafficPolicy/${ns}/${name}`;
artifactNamespaces(ns);

function policy(name: string): string {
  return `
apiVersion: gateway.gwvendor.dev/v1alpha1
kind: TrafficPolicy
metadata: {name: ${name}, namespace: ${ns}}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: web}]
  headerModifiers: {response: {set: [{name: x-policy, value: ${name}}]}}
`;
}

describe('policy rule 2: two policies on one route, the oldest wins', () => {
  let admin: AdminSession;
  let url: string;
  const req = () => ({ url, path: '/headers', host });

  /** Waits until config_dump's route for the host names `policy` as the source of headerModifiers. */
  async function appliedInDump(policyName: string): Promise<any> {
    return waitFor(`config_dump route for ${host} to take headerModifiers from ${ref(policyName)}`, async () => {
      const hits = findRoutes(await configDump(admin), { host, path: '/headers' });
      return {
        ok: hits.length > 0 && hits.every((h) => h.provenance.headerModifiers === ref(policyName)),
        value: hits[0]?.route,
        seen: hits.map((h) => h.provenance),
      };
    });
  }

  beforeAll(async () => {
    await lab.kube.apply(gatewayWithRoute(ns, host));
    await lab.kube.apply(sampleBackend(ns));
    const [older] = await lab.kube.apply(policy(OLDER));
    // creationTimestamp has one-second resolution: the newer policy is created in a later second, so that the two
    // are ordered by age and not by the name tie-break (retried should a clock skew still give equal timestamps).
    const olderTs = Date.parse(older.metadata!.creationTimestamp as unknown as string);
    await waitFor(`the clock to pass ${older.metadata!.creationTimestamp}`, async () => ({
      ok: Date.now() >= olderTs + 1000,
    }));
    await waitFor(`${NEWER} to be created in a later second than ${OLDER}`, async () => {
      const [newer] = await lab.kube.apply(policy(NEWER));
      const ts = Date.parse(newer.metadata!.creationTimestamp as unknown as string);
      if (ts <= olderTs) await lab.kube.delete(newer, { wait: true });
      return { ok: ts > olderTs, seen: { older: olderTs, newer: ts } };
    });
    await lab.kube.waitForCondition(GW_API, 'Gateway', 'gw', ns, 'Programmed', { timeoutMs: 60_000 });
    url = await gatewayUrl(lab.kube, ns, 'gw', 8080);
    admin = await openProxyAdmin(lab.kube, { namespace: ns, name: 'gw' });
    await expectHttpEventually(req(), { status: 200 });
  });

  // biome-ignore lint/correctness/noEmptyPattern: vitest passes the suite second; the first argument must be a pattern.
  afterAll(async ({}, suite) => {
    await collectSuiteFailure(suite);
    await admin?.close();
    if (process.env.KEEP !== '1') await lab.k(['delete', 'namespace', ns, '--wait=false']).catch(() => undefined);
  });

  it('applies the oldest policy: config_dump names it and traffic carries its header', async () => {
    const route = await appliedInDump(OLDER);
    expect(JSON.stringify(route.response_headers_to_add)).toContain(OLDER);
    expect(JSON.stringify(route)).not.toContain(NEWER);
    await expectHttpEventually(req(), { status: 200, headers: { 'x-policy': OLDER } });
  });

  it('statuses: both Accepted; the oldest Attached, the newer Overridden naming the oldest', async () => {
    const newer = await lab.kube.waitForCondition(VENDOR, 'TrafficPolicy', NEWER, ns, 'Attached', {
      status: 'False',
      reason: 'Overridden',
    });
    const attached = newer.status.conditions.find((c: any) => c.type === 'Attached');
    expect(attached.message).toContain(ref(OLDER));
    expect(newer.status.conditions.find((c: any) => c.type === 'Accepted')?.status).toBe('True');
    const older = await lab.kube.waitForCondition(VENDOR, 'TrafficPolicy', OLDER, ns, 'Attached', {
      reason: 'Attached',
    });
    expect(older.status.conditions.find((c: any) => c.type === 'Accepted')?.status).toBe('True');
  });

  it('explain: the newer policy is overridden by the older one (rule 2), named with both creation times', async () => {
    const { code, report, run } = await explainJson(lab, 'httproute/web', ns);
    expect(code, run.stdout).toBe(1);
    const problems = report.findings.filter((x: any) => x.level === 'problem');
    expect(problems, run.stdout).toHaveLength(1);
    expect(problems[0]).toMatchObject({ rule: 2, subject: `TrafficPolicy ${ns}/${NEWER}` });
    expect(problems[0].message).toContain(`overridden by the older ${ref(OLDER)} for headerModifiers`);
    const [older, newer] = await Promise.all([OLDER, NEWER].map((n) => lab.kube.get(VENDOR, 'TrafficPolicy', n, ns)));
    const ts = (o: KObj | undefined) => new Date(o!.metadata!.creationTimestamp as unknown as string).toISOString();
    expect(problems[0].details.map((d: string) => d.replace(/\.000Z$/, 'Z'))).toEqual(
      [`${ref(OLDER)} created ${ts(older)}`, `${ref(NEWER)} created ${ts(newer)}`].map((d) =>
        d.replace(/\.000Z$/, 'Z'),
      ),
    );
    const verdicts = Object.fromEntries(report.policies.map((p: any) => [p.policy, p.verdict]));
    expect(verdicts).toEqual({ [`${ns}/${OLDER}`]: 'applied', [`${ns}/${NEWER}`]: 'not applied' });
  });

  it('deleting the oldest applies the newer', async () => {
    await lab.k(['delete', 'trafficpolicy', OLDER, '-n', ns]);
    const route = await appliedInDump(NEWER);
    expect(JSON.stringify(route.response_headers_to_add)).toContain(NEWER);
    await expectHttpEventually(req(), { status: 200, headers: { 'x-policy': NEWER } });
    await lab.kube.waitForCondition(VENDOR, 'TrafficPolicy', NEWER, ns, 'Attached', { reason: 'Attached' });
  });
});
