// Contract section 7, "invalid configuration rejected by the proxy — possible when resource validation is not
// enabled", and interfaces page "validation switch" (GWVENDOR_XDS_VALIDATION on the control plane Deployment).
// With validation off, an HTTPRoute whose path regex is not valid RE2 is translated as written and sent; the proxy
// NACKs the route configuration: Envoy's `gRPC config for ... rejected` warning in the proxy log, the rejected
// resource in config_dump `error_state` (NACKED), `last_nack` in /snapshots/xds, and the route's status says so. The
// proxy keeps serving its last good configuration. With validation on, the control plane rejects the rule in the
// route's status instead, sends nothing invalid, and serves the route's valid rule.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AdminSession,
  configDump,
  controlPlaneSelector,
  dynamicErrors,
  findRoutes,
  openControlPlaneAdmin,
  openProxyAdmin,
} from '../lab/toolkit/admin.ts';
import { eventsFor } from '../lab/toolkit/describe.ts';
import { expectHttpEventually, send } from '../lab/toolkit/http.ts';
import type { Kube } from '../lab/toolkit/kube.ts';
import { type LogMark, markLogs } from '../lab/toolkit/logs.ts';
import { waitFor } from '../lab/toolkit/wait.ts';
import { artifactNamespaces, collectSuiteFailure } from './support/artifacts.ts';
import { gatewayUrl, namespaceWithGateway, sampleBackend } from './support/gateway.ts';
import { uniqueName, useLab } from './support/lab.ts';
import { explainJson } from './support/tools.ts';

const GW_API = 'gateway.networking.k8s.io/v1';
const CP_NS = 'gwvendor-system';
const CP = 'gwvendor';
const VALIDATION_ENV = 'GWVENDOR_XDS_VALIDATION';
const lab = useLab();
const ns = uniqueName('s08-invalid');
const role = `gwvendor-kube-gateway-api~${ns}~gw`;
const goodHost = 'good.s08.example.com';
const badHost = 'bad.s08.example.com';
// A lookahead: JavaScript's RegExp accepts it, RE2 (Envoy's safe_regex, and this proxy's) does not.
const BAD_REGEX = '/anything/items/(?=[0-9]+)';
const GOOD_REGEX = '/anything/items/[0-9]+';
const POD_LABEL = 'app.orch.io/name=gw';
artifactNamespaces(ns);

const badRoute = `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: bad, namespace: ${ns}}
spec:
  parentRefs: [{name: gw}]
  hostnames: [${badHost}]
  rules:
  - matches: [{path: {type: RegularExpression, value: "${BAD_REGEX}"}}]
    backendRefs: [{name: sampleapp, port: 8000}]
  - matches: [{path: {type: PathPrefix, value: /anything}}]
    backendRefs: [{name: sampleapp, port: 8000}]
`;

async function validationMode(kube: Kube): Promise<string | undefined> {
  const d = await kube.get('apps/v1', 'Deployment', CP, CP_NS);
  return d?.spec.template.spec.containers[0].env?.find((e: { name: string }) => e.name === VALIDATION_ENV)?.value;
}

/** What a user runs: `kubectl set env deploy/gwvendor GWVENDOR_XDS_VALIDATION=<mode>`, then waits for the rollout. */
async function setValidation(mode: string | undefined): Promise<void> {
  await lab.k([
    'set',
    'env',
    `deploy/${CP}`,
    '-n',
    CP_NS,
    mode === undefined ? `${VALIDATION_ENV}-` : `${VALIDATION_ENV}=${mode}`,
  ]);
  await lab.kube.waitForRollout(CP, CP_NS, { timeoutMs: 90_000 });
}

interface XdsEntry {
  proxies: Record<
    string,
    {
      types: Record<
        string,
        {
          status: string;
          version_sent?: string;
          version_acked?: string;
          last_nack?: { version: string; detail: string; at: string };
        }
      >;
    }
  >;
  routes: unknown[];
}

/** This Gateway's /snapshots/xds entry once its proxy is connected to the (new) control plane and `ok` holds. */
async function xdsEntry(cp: AdminSession, what: string, ok: (e: XdsEntry) => boolean): Promise<XdsEntry> {
  return waitFor(
    `/snapshots/xds: ${what}`,
    async () => {
      const x = await cp.json<{ data: Record<string, XdsEntry> }>('/snapshots/xds');
      const e = x.data[role];
      return { ok: !!e && Object.keys(e.proxies ?? {}).length > 0 && ok(e), value: e, seen: e?.proxies ?? x };
    },
    { timeoutMs: 45_000, intervalMs: 200 },
  );
}

const routeTypes = (e: XdsEntry) => Object.values(e.proxies)[0].types.routes;

describe('invalid config: NACKed by the proxy with validation off, rejected in status with validation on', () => {
  let original: string | undefined;
  let url: string;
  let proxy: AdminSession;
  let cp: AdminSession | undefined;
  let proxyLog: LogMark;

  beforeAll(async () => {
    original = await validationMode(lab.kube);
    await lab.kube.apply(`${namespaceWithGateway(ns, 'Same')}---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: good, namespace: ${ns}}
spec:
  parentRefs: [{name: gw}]
  hostnames: [${goodHost}]
  rules: [{backendRefs: [{name: sampleapp, port: 8000}]}]
`);
    await lab.kube.apply(sampleBackend(ns));
    await lab.kube.waitForCondition(GW_API, 'Gateway', 'gw', ns, 'Programmed', { timeoutMs: 60_000 });
    url = await gatewayUrl(lab.kube, ns, 'gw', 8080);
    await expectHttpEventually({ url, path: '/headers', host: goodHost }, { status: 200 });
    proxy = await openProxyAdmin(lab.kube, { namespace: ns, name: 'gw' });
  });

  // biome-ignore lint/correctness/noEmptyPattern: vitest passes the suite second; the first argument must be a pattern.
  afterAll(async ({}, suite) => {
    await collectSuiteFailure(suite);
    await proxy?.close();
    await cp?.close();
    // The control plane is shared by every scenario: its validation mode goes back to what it was.
    if ((await validationMode(lab.kube).catch(() => original)) !== original) await setValidation(original);
    if (process.env.KEEP !== '1') await lab.k(['delete', 'namespace', ns, '--wait=false']).catch(() => undefined);
  });

  it('validation off: the proxy NACKs the invalid route, visible in its log, config_dump error_state and /snapshots/xds', async () => {
    await setValidation('off');
    cp = await openControlPlaneAdmin(lab.kube);
    // The proxy has reconnected to the new control plane and ACKed its snapshot.
    await xdsEntry(cp, 'the proxy ACKed the routes of the new control plane', (e) => routeTypes(e)?.status === 'ACKED');

    proxyLog = await markLogs(lab.kube, { namespace: ns, labelSelector: POD_LABEL });
    const cpLog = await markLogs(lab.kube, { namespace: CP_NS, labelSelector: await controlPlaneSelector(lab.kube) });
    await lab.kube.apply(badRoute);

    // 1. The proxy log: Envoy's warning, naming the type and the reason.
    const lines = await proxyLog.waitFor(
      'the proxy to log the rejected route configuration',
      /\[warning\]\[config\] .*rejected/,
    );
    const warning = lines.find((l) => /\[warning\]\[config\] /.test(l))!;
    expect(warning).toMatch(
      /^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}\]\[\d+\]\[warning\]\[config\] \[[^\]]+:\d+\] gRPC config for type\.googleapis\.com\/envoy\.config\.route\.v3\.RouteConfiguration rejected: .*regex/i,
    );

    // 2. config_dump: the rejected configuration in error_state, the route config NACKED.
    const dump = await configDump(proxy);
    const errors = dynamicErrors(dump).filter(
      (e) => e.typeUrl === 'type.googleapis.com/envoy.admin.v3.RoutesConfigDump',
    );
    expect(errors.length, JSON.stringify(dynamicErrors(dump))).toBe(1);
    expect(errors[0].error).toMatch(/regex/i);
    expect(Number.isNaN(Date.parse(errors[0].lastUpdateAttempt ?? ''))).toBe(false);
    const routes = dump.configs.find((c) => c['@type'] === 'type.googleapis.com/envoy.admin.v3.RoutesConfigDump')!;
    const rc = routes.dynamic_route_configs.find((d: any) => d.error_state);
    expect(rc.client_status).toBe('NACKED');
    expect(JSON.stringify(rc.error_state.failed_configuration)).toContain(BAD_REGEX);
    // What is active is still the last good configuration: no trace of the bad route's hostname.
    expect(JSON.stringify(rc.route_config)).not.toContain(badHost);
    expect(rc.error_state.version_info).not.toBe(rc.version_info);

    // 3. /snapshots/xds: last_nack on the routes of this proxy, with the version that was rejected.
    const e = await xdsEntry(cp, 'a last_nack on the routes', (x) => !!routeTypes(x)?.last_nack);
    const routesState = routeTypes(e);
    expect(routesState.last_nack!.detail).toMatch(/regex/i);
    expect(routesState.last_nack!.version).toBe(rc.error_state.version_info);
    expect(routesState.version_acked).not.toBe(routesState.last_nack!.version);
    expect(JSON.stringify(e.routes)).toContain(BAD_REGEX);

    // 4. The control plane's own log: a warn line naming the proxy and the rejected type.
    const cpLines = await cpLog.waitFor('the control plane to log the NACK', /proxy rejected configuration \(NACK\)/);
    const nack = cpLines.map((l) => JSON.parse(l)).find((l) => l.msg === 'proxy rejected configuration (NACK)');
    expect(nack).toMatchObject({ level: 'warn', component: 'xds' });
    expect(JSON.stringify(nack)).toContain(Object.keys(e.proxies)[0]);
  });

  it('validation off: the route status reports the rejection, and traffic keeps flowing on the last good config', async () => {
    const r = await lab.kube.waitForCondition(GW_API, 'HTTPRoute', 'bad', ns, 'Programmed', {
      status: 'False',
      reason: 'Rejected',
    });
    const programmed = r.status.parents[0].conditions.find((c: any) => c.type === 'Programmed');
    expect(programmed.message).toMatch(/validation is off/);
    // And a Warning Event on the route, as `kubectl describe httproute bad` lists it.
    const events = await waitFor('a Warning event Rejected on HTTPRoute bad', async () => {
      const ev = await eventsFor(lab.kube, { kind: 'HTTPRoute', name: 'bad', namespace: ns });
      return { ok: ev.some((x) => x.type === 'Warning' && x.reason === 'Rejected'), value: ev, seen: ev };
    });
    expect(events.find((x) => x.reason === 'Rejected')!.message).toMatch(/regex/i);
    // The same through kubectl, as a user lists them.
    const listed = await lab.k(['events', '-n', ns, '--for', 'httproute/bad', '--types', 'Warning']);
    expect(listed).toMatch(/Warning\s+Rejected\s+httproute\/bad\s+proxy .* rejected RouteConfiguration/i);
    // Last good config: the good route serves, the rejected route's valid rule is not there (no virtual host: 404).
    await expectHttpEventually({ url, path: '/headers', host: goodHost }, { status: 200 }, { consecutive: 5 });
    const bad = await send({ url, path: '/anything/ok', host: badHost });
    expect([bad.status, bad.body]).toEqual([404, '']);
  });

  it('validation off: explain names the standing NACK, and that the accepted route is missing from config_dump', async () => {
    const { code, report, run } = await explainJson(lab, 'httproute/bad', ns);
    expect(code, run.stdout).toBe(1);
    const problems = report.findings.filter((x: any) => x.level === 'problem');
    const nack = problems.find((x: any) => /rejected \(NACK\) the routes/.test(x.message));
    expect(nack, run.stdout).toMatchObject({ subject: `Gateway ${ns}/gw` });
    expect(nack.message).toMatch(/regex/i);
    expect(problems.find((x: any) => x.disagreement)?.message).toBe(
      `status says Accepted by Gateway ${ns}/gw, but no route of it is in that Gateway's proxy config_dump`,
    );
  });

  it('validation off: fixing the regex, the proxy ACKs a newer version, error_state clears, the rejection leaves the route status', async () => {
    await lab.kube.apply(badRoute.replace(BAD_REGEX, GOOD_REGEX));
    await expectHttpEventually({ url, path: '/anything/items/42', host: badHost }, { status: 200 });
    await expectHttpEventually({ url, path: '/anything/ok', host: badHost }, { status: 200 });
    const e = await xdsEntry(cp!, 'the routes ACKed after the fix', (x) => {
      const t = routeTypes(x);
      return t?.status === 'ACKED' && t.version_acked === t.version_sent;
    });
    // last_nack stays as the record of the last rejection; the ACKed version is newer than the rejected one.
    const t = routeTypes(e);
    if (t.last_nack) expect(Number(t.version_acked)).toBeGreaterThan(Number(t.last_nack.version));
    const dump = await configDump(proxy);
    expect(dynamicErrors(dump)).toEqual([]);
    expect(findRoutes(dump, { host: badHost }).map((h) => h.route.match.safe_regex?.regex)).toContain(GOOD_REGEX);
    // The route's Programmed=False/Rejected condition is there only while a proxy rejects its config: it goes once
    // a later version is ACKed.
    await waitFor('the Rejected condition to leave HTTPRoute bad', async () => {
      const r = await lab.kube.get(GW_API, 'HTTPRoute', 'bad', ns);
      const conds = r?.status?.parents?.[0]?.conditions ?? [];
      return { ok: !conds.some((c: any) => c.type === 'Programmed'), seen: conds };
    });
    // The invalid version again, for the validation-on step.
    await lab.kube.apply(badRoute);
    await lab.kube.waitForCondition(GW_API, 'HTTPRoute', 'bad', ns, 'Programmed', {
      status: 'False',
      reason: 'Rejected',
    });
  });

  it('validation on: the status rejects the invalid rule instead, nothing invalid is sent, the valid rule serves', async () => {
    await setValidation('strict');
    await cp?.close();
    cp = await openControlPlaneAdmin(lab.kube);
    proxyLog = await markLogs(lab.kube, { namespace: ns, labelSelector: POD_LABEL });
    const r = await lab.kube.waitForCondition(GW_API, 'HTTPRoute', 'bad', ns, 'PartiallyInvalid', {
      timeoutMs: 45_000,
    });
    const cond = r.status.parents[0].conditions.find((c: any) => c.type === 'PartiallyInvalid');
    expect(cond.message).toMatch(/invalid RE2 regex/);
    // The new control plane's snapshot leaves the invalid rule out, and the proxy ACKs it.
    const e = await xdsEntry(cp, 'the proxy ACKed the routes of the strict control plane', (x) => {
      const t = routeTypes(x);
      return t?.status === 'ACKED' && t.version_acked === t.version_sent;
    });
    expect(routeTypes(e).last_nack).toBeUndefined();
    expect(JSON.stringify(e.routes)).not.toContain(BAD_REGEX);
    expect(JSON.stringify(e.routes)).toContain(badHost);
    await expectHttpEventually({ url, path: '/anything/ok', host: badHost }, { status: 200 });
    await expectHttpEventually({ url, path: '/headers', host: goodHost }, { status: 200 });
    const dump = await configDump(proxy);
    const rc = dump.configs
      .find((c) => c['@type'] === 'type.googleapis.com/envoy.admin.v3.RoutesConfigDump')!
      .dynamic_route_configs.find((d: any) => JSON.stringify(d.route_config).includes(badHost));
    expect(rc.client_status).toBe('ACKED');
    expect(JSON.stringify(rc.route_config)).not.toContain(BAD_REGEX);
    // A later accepted update of the resource clears its error_state, as in Envoy.
    expect(dynamicErrors(dump)).toEqual([]);
    // No rejection since the switch.
    expect((await proxyLog.since()).filter((l) => /\[warning\]\[config\] .*rejected/.test(l))).toEqual([]);
  });
});
