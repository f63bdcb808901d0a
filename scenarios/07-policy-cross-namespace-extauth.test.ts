// Contract section 7, rule 3: a GatewayExtension (ext auth) whose backing Service is in another namespace needs a
// ReferenceGrant in the Service's namespace. The ext-auth sample of the lab (namespace extauth, Service extauth:9000)
// allows a request that carries `x-ext-authz: allow` and answers 403 otherwise. The Gateway, route, extension and
// policy live in the scenario's own namespace; the grant is created in namespace extauth as the contract writes it.
// Without it ext auth is not applied (config_dump and traffic) and the statuses name the missing grant; with it,
// requests without the header get 403 and requests with it 200.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AdminSession, configDump, findRoutes, openProxyAdmin } from '../lab/toolkit/admin.ts';
import { expectHttpEventually } from '../lab/toolkit/http.ts';
import { waitFor } from '../lab/toolkit/wait.ts';
import { artifactNamespaces, collectSuiteFailure } from './support/artifacts.ts';
import { gatewayUrl, gatewayWithRoute, sampleBackend } from './support/gateway.ts';
import { uniqueName, useLab } from './support/lab.ts';
import { explainJson } from './support/tools.ts';

const GW_API = 'gateway.networking.k8s.io/v1';
const VENDOR = 'gateway.gwvendor.dev/v1alpha1';
const EXTAUTH_NS = 'extauth';
const lab = useLab();
const ns = uniqueName('s07-extauth');
const host = 's07.example.com';
const grantName = `allow-${ns}`;
/** The name `explain` gives the grant it prints (refgrant-yaml.ts). */
const explainGrantName = `allow-gatewayextension-${ns}-to-service-extauth`;
const policyRef = `TrafficPolicy/${ns}/auth`;
const filterName = `envoy.filters.http.ext_authz/${ns}/ext-auth`;
artifactNamespaces(ns);

// The contract's ReferenceGrant (section 2.4 and rule 3): in the Service's namespace, from GatewayExtensions of the
// extension's namespace, to core Services.
const grant = `
apiVersion: gateway.networking.k8s.io/v1beta1
kind: ReferenceGrant
metadata:
  name: ${grantName}
  namespace: ${EXTAUTH_NS}
spec:
  from:
    - group: gateway.gwvendor.dev
      kind: GatewayExtension
      namespace: ${ns}
  to:
    - group: ""
      kind: Service
`;

describe('policy rule 3: a cross-namespace GatewayExtension (ext auth) needs a ReferenceGrant', () => {
  let admin: AdminSession;
  let url: string;
  const req = (headers: Record<string, string> = {}) => ({ url, path: '/headers', host, headers });

  beforeAll(async () => {
    await lab.kube.apply(`${gatewayWithRoute(ns, host)}---
apiVersion: gateway.gwvendor.dev/v1alpha1
kind: GatewayExtension
metadata: {name: ext-auth, namespace: ${ns}}
spec:
  extAuth:
    httpService:
      backendRef: {name: extauth, namespace: ${EXTAUTH_NS}, port: 9000}
---
apiVersion: gateway.gwvendor.dev/v1alpha1
kind: TrafficPolicy
metadata: {name: auth, namespace: ${ns}}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: web}]
  extAuth: {extensionRef: {name: ext-auth}}
`);
    await lab.kube.apply(sampleBackend(ns));
    await lab.kube.waitForRollout('extauth', EXTAUTH_NS, { timeoutMs: 60_000 });
    await lab.kube.waitForCondition(GW_API, 'Gateway', 'gw', ns, 'Programmed', { timeoutMs: 60_000 });
    url = await gatewayUrl(lab.kube, ns, 'gw', 8080);
    admin = await openProxyAdmin(lab.kube, { namespace: ns, name: 'gw' });
    await expectHttpEventually(req(), { status: 200 });
  });

  // biome-ignore lint/correctness/noEmptyPattern: vitest passes the suite second; the first argument must be a pattern.
  afterAll(async ({}, suite) => {
    await collectSuiteFailure(suite);
    await admin?.close();
    if (process.env.KEEP === '1') return;
    for (const g of [grantName, explainGrantName]) {
      await lab.k(['delete', 'referencegrant', g, '-n', EXTAUTH_NS, '--ignore-not-found']).catch(() => undefined);
    }
    await lab.k(['delete', 'namespace', ns, '--wait=false']).catch(() => undefined);
  });

  it('without the grant: the statuses name the missing ReferenceGrant', async () => {
    const ext = await lab.kube.waitForCondition(VENDOR, 'GatewayExtension', 'ext-auth', ns, 'ResolvedRefs', {
      status: 'False',
      reason: 'RefNotPermitted',
    });
    const msg = ext.status.conditions.find((c: any) => c.type === 'ResolvedRefs').message;
    expect(msg).toContain(`no ReferenceGrant in namespace ${EXTAUTH_NS}`);
    expect(msg).toContain(`from group gateway.gwvendor.dev, kind GatewayExtension, namespace ${ns}`);
    expect(msg).toMatch(/to group "" \(core\), kind Service/);
    const p = await lab.kube.waitForCondition(VENDOR, 'TrafficPolicy', 'auth', ns, 'Attached', {
      status: 'False',
      reason: 'RefNotPermitted',
    });
    expect(p.status.conditions.find((c: any) => c.type === 'Accepted')?.status).toBe('True');
    expect(JSON.stringify(p.status)).toContain(`no ReferenceGrant in namespace ${EXTAUTH_NS}`);
  });

  it('without the grant: ext auth is absent from config_dump and traffic passes without the header', async () => {
    const dump = await configDump(admin);
    const hits = findRoutes(dump, { host, path: '/headers' });
    expect(hits.length, 'the route of the HTTPRoute is in config_dump').toBeGreaterThan(0);
    for (const h of hits) expect(h.provenance.extAuth).toBeUndefined();
    expect(JSON.stringify(dump)).not.toContain(filterName);
    await expectHttpEventually(req(), { status: 200 });
  });

  it('with the grant: applied in config_dump; 403 without x-ext-authz: allow, 200 with it', async () => {
    await lab.k(['apply', '-f', '-'], grant);
    await waitFor(`config_dump route for ${host} to take extAuth from ${policyRef}`, async () => {
      const dump = await configDump(admin);
      const hits = findRoutes(dump, { host, path: '/headers' });
      return {
        ok: hits.length > 0 && hits.every((h) => h.provenance.extAuth === policyRef),
        seen: hits.map((h) => h.provenance),
      };
    });
    expect(JSON.stringify(await configDump(admin))).toContain(filterName);
    await expectHttpEventually(req(), { status: 403 });
    await expectHttpEventually(req({ 'x-ext-authz': 'deny' }), { status: 403 });
    const ok = await expectHttpEventually(req({ 'x-ext-authz': 'allow' }), { status: 200 });
    expect(ok.json?.headers).toBeTypeOf('object');
  });

  it('with the grant: the extension resolves and the policy reads Attached', async () => {
    await lab.kube.waitForCondition(VENDOR, 'GatewayExtension', 'ext-auth', ns, 'ResolvedRefs');
    const p = await lab.kube.waitForCondition(VENDOR, 'TrafficPolicy', 'auth', ns, 'Attached', { reason: 'Attached' });
    expect(p.status.conditions.find((c: any) => c.type === 'ResolvedRefs')?.status).toBe('True');
  });

  it('explain prints the missing ReferenceGrant (rule 3); applied as printed, the policy applies', async () => {
    // Back to the state without a grant: ext auth leaves config_dump and traffic.
    await lab.k(['delete', 'referencegrant', grantName, '-n', EXTAUTH_NS]);
    await waitFor(`config_dump route for ${host} to lose extAuth`, async () => {
      const hits = findRoutes(await configDump(admin), { host, path: '/headers' });
      return { ok: hits.length > 0 && hits.every((h) => !h.provenance.extAuth), seen: hits.map((h) => h.provenance) };
    });
    const before = await explainJson(lab, 'httproute/web', ns);
    expect(before.code, before.run.stdout).toBe(1);
    const f = before.report.findings.find((x: any) => x.rule === 3);
    expect(f, before.run.stdout).toMatchObject({ level: 'problem', subject: `TrafficPolicy ${ns}/auth` });
    expect(f.yaml).toContain(`namespace: ${EXTAUTH_NS}`);
    expect(before.report.policies.find((p: any) => p.policy === `${ns}/auth`).verdict).toBe('not applied');
    // The same answer from the extension's side.
    const ext = await explainJson(lab, 'gatewayextension/ext-auth', ns);
    expect(ext.report.findings.find((x: any) => x.rule === 3)?.yaml).toBe(f.yaml);

    await lab.k(['apply', '-f', '-'], f.yaml);
    await waitFor(`config_dump route for ${host} to take extAuth from ${policyRef} again`, async () => {
      const hits = findRoutes(await configDump(admin), { host, path: '/headers' });
      return {
        ok: hits.length > 0 && hits.every((h) => h.provenance.extAuth === policyRef),
        seen: hits.map((h) => h.provenance),
      };
    });
    await expectHttpEventually(req(), { status: 403 });
    await expectHttpEventually(req({ 'x-ext-authz': 'allow' }), { status: 200 });
    const after = await explainJson(lab, 'trafficpolicy/auth', ns);
    expect(after.code, after.run.stdout).toBe(0);
    expect(after.report.policies[0]).toMatchObject({ verdict: 'applied', applied: ['extAuth'] });
  });
});
