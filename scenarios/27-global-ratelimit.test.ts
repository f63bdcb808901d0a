// Issue 13 item 3: a global rate limit, as a user sets one up. The lab ships a rate-limit sample (namespace
// ratelimit, system/ratelimit: envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit, in-memory counters, rule
// `gwlab:generic_key:3/minute`); a GatewayExtension of type rateLimit points at it (domain gwlab) and a TrafficPolicy
// rateLimit.global sends a generic-key descriptor per request (Envoy's ratelimit filter + RouteAction.rate_limits).
// The first 3 requests of the minute pass, the 4th gets 429 with `x-envoy-ratelimited: true` and flag RL, and the
// service's counter (GET /counters) shows the hits. The realistic bug: the descriptor uses a header the clients do not
// send, so nothing is ever limited (no descriptor, no call) — the fix is a header they do send. Bad input: a
// descriptor entry with two kinds is refused by the API server naming the rule; a rate-limit service that is down
// lets requests through (failOpen, Envoy's failure_mode_deny: false).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readManifest } from '../lab/install.ts';
import { type AdminSession, configDump, findRoutes, openProxyAdmin } from '../lab/toolkit/admin.ts';
import { expectHttpEventually, send } from '../lab/toolkit/http.ts';
import { type PortForward, portForward } from '../lab/toolkit/portforward.ts';
import { waitFor } from '../lab/toolkit/wait.ts';
import { artifactNamespaces, collectSuiteFailure } from './support/artifacts.ts';
import { gatewayUrl, gatewayWithRoute, sampleBackend } from './support/gateway.ts';
import { uniqueName, useLab } from './support/lab.ts';

const GW_API = 'gateway.networking.k8s.io/v1';
const VENDOR = 'gateway.gwvendor.dev/v1alpha1';
const RL_NS = 'ratelimit';
const lab = useLab();
const ns = uniqueName('s27-ratelimit');
const host = 's27.example.com';
const grantName = `allow-${ns}`;
const policyRef = `TrafficPolicy/${ns}/limit`;
/** Unique per run: the sample's counters outlive a run, and its rule limits each generic_key value on its own. */
const key = ns;
artifactNamespaces(ns);

const policy = (entries: string) => `
apiVersion: gateway.gwvendor.dev/v1alpha1
kind: TrafficPolicy
metadata: {name: limit, namespace: ${ns}}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: web}]
  rateLimit:
    global:
      extensionRef: {name: rls}
      descriptors:
        - entries: ${entries}
`;

const extension = (backend: string, extra = '') => `
apiVersion: gateway.gwvendor.dev/v1alpha1
kind: GatewayExtension
metadata: {name: rls, namespace: ${ns}}
spec:
  rateLimit:
    grpcService:
      backendRef: ${backend}
    domain: gwlab
    timeout: 2s
${extra}`;

describe('global rate limit: 429 after N requests, the service’s counter visible', () => {
  let admin: AdminSession;
  let counters: PortForward;
  let url: string;
  const req = (headers: Record<string, string> = {}) => ({ url, path: '/headers', host, headers });
  const counter = async (descriptor: string) => {
    const r = await send({ url: counters.url, path: '/counters' });
    return (r.json as any[]).find((c) => c.domain === 'gwlab' && c.descriptor === descriptor);
  };

  beforeAll(async () => {
    // Labs started before this scenario existed lack the sample: the lab's own manifest, applied as lab:up does.
    await lab.kube.apply(readManifest('ratelimit.yaml'));
    await lab.kube.apply(`${gatewayWithRoute(ns, host)}---
apiVersion: gateway.networking.k8s.io/v1beta1
kind: ReferenceGrant
metadata: {name: ${grantName}, namespace: ${RL_NS}}
spec:
  from: [{group: gateway.gwvendor.dev, kind: GatewayExtension, namespace: ${ns}}]
  to: [{group: "", kind: Service}]
---${extension(`{name: ratelimit, namespace: ${RL_NS}, port: 8081}`)}---${policy('[{header: {name: x-api-key, key: generic_key}}]')}`);
    await lab.kube.apply(sampleBackend(ns));
    await lab.kube.waitForRollout('ratelimit', RL_NS, { timeoutMs: 90_000 });
    await lab.kube.waitForCondition(GW_API, 'Gateway', 'gw', ns, 'Programmed', { timeoutMs: 60_000 });
    url = await gatewayUrl(lab.kube, ns, 'gw', 8080);
    admin = await openProxyAdmin(lab.kube, { namespace: ns, name: 'gw' });
    counters = await portForward(lab.kube.kc, { namespace: RL_NS, labelSelector: 'app=ratelimit', port: 8080 });
  });

  // biome-ignore lint/correctness/noEmptyPattern: vitest passes the suite second; the first argument must be a pattern.
  afterAll(async ({}, suite) => {
    await collectSuiteFailure(suite);
    await Promise.all([admin?.close(), counters?.close()]);
    if (process.env.KEEP === '1') return;
    await lab.k(['delete', 'referencegrant', grantName, '-n', RL_NS, '--ignore-not-found']).catch(() => undefined);
    await lab.k(['delete', 'namespace', ns, '--wait=false']).catch(() => undefined);
  });

  it('the bug: a descriptor on a header clients do not send limits nothing (no descriptor, no call)', async () => {
    await lab.kube.waitForCondition(VENDOR, 'GatewayExtension', 'rls', ns, 'ResolvedRefs');
    await waitFor(`config_dump route for ${host} to take rateLimit from ${policyRef}`, async () => {
      const hits = findRoutes(await configDump(admin), { host, path: '/headers' });
      return { ok: hits.length > 0 && hits.every((h) => h.provenance.rateLimit === policyRef), seen: hits };
    });
    const dump = JSON.stringify(await configDump(admin));
    expect(dump).toContain(`"name":"envoy.filters.http.ratelimit/${ns}/rls"`);
    expect(dump).toContain('"rate_limits":[{"actions":[{"request_headers":{"header_name":"x-api-key"');
    for (let i = 0; i < 5; i++) await expectHttpEventually(req(), { status: 200 });
  });

  it('the fix: a generic key on every request; the 4th request of the minute gets 429 (RL), the counter shows every hit', async () => {
    await lab.kube.apply(policy(`[{genericKey: {value: ${key}}}]`));
    await waitFor('config_dump to carry the generic_key action', async () => {
      const dump = JSON.stringify(await configDump(admin));
      return { ok: dump.includes(`"generic_key":{"descriptor_value":"${key}"}`), seen: '' };
    });
    // The sample counts in fixed one-minute windows (same clock: the lab runs on this machine): start well inside one.
    const intoMinute = Date.now() % 60_000;
    if (intoMinute > 50_000) await new Promise((r) => setTimeout(r, 60_500 - intoMinute));
    const codes: number[] = [];
    for (let i = 0; i < 4; i++) codes.push((await send(req())).status);
    expect(codes).toEqual([200, 200, 200, 429]);
    const limited = await send(req());
    expect(limited.status).toBe(429);
    expect(limited.headers['x-envoy-ratelimited']).toBe('true');
    const c = await counter(`generic_key=${key}`);
    expect(c).toMatchObject({ limit: 3, hits: 5, overLimit: 2, unit: 'minute' });
  });

  it('a descriptor entry setting two kinds is refused by the API server, naming the rule', async () => {
    const err = await lab.k(['apply', '-f', '-'], policy(`[{genericKey: {value: a}, remoteAddress: {}}]`)).then(
      () => '',
      (e: Error) => e.message,
    );
    expect(err).toContain('spec.rateLimit.global.descriptors[0].entries[0]');
    expect(err).toContain('set exactly one of remoteAddress, header and genericKey');
  });

  it('the rate-limit service is down (a Service with no endpoints): requests pass, as failOpen (the default) says', async () => {
    await lab.kube.apply(`
apiVersion: v1
kind: Service
metadata: {name: rls-down, namespace: ${ns}}
spec:
  selector: {app: no-such-service}
  ports: [{name: grpc, port: 8081}]
---${extension('{name: rls-down, port: 8081}')}`);
    await expectHttpEventually(req(), { status: 200 });
    for (let i = 0; i < 5; i++) expect((await send(req())).status).toBe(200);
  });
});
