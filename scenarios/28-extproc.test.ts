// Issue 13 item 3: an external processor adding a header, as a user wires one up. The lab ships an ext-proc sample
// (namespace extproc, system/extproc: envoy.service.ext_proc.v3.ExternalProcessor/Process, sets `x-extproc-seen:
// true` on each request, answers 403 itself to `x-extproc-deny`); a GatewayExtension of type extProc points at it
// and a TrafficPolicy extProc turns it on for a route (Envoy's ext_proc filter, headers mode). The realistic bug: the
// processor is in another namespace and no ReferenceGrant allows it, so nothing happens and the statuses say why;
// with the grant the upstream sees the header. A processor that is down fails requests with 500 until failOpen.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readManifest } from '../lab/install.ts';
import { type AdminSession, configDump, findRoutes, openProxyAdmin } from '../lab/toolkit/admin.ts';
import { expectHttpEventually } from '../lab/toolkit/http.ts';
import { waitFor } from '../lab/toolkit/wait.ts';
import { artifactNamespaces, collectSuiteFailure } from './support/artifacts.ts';
import { gatewayUrl, gatewayWithRoute, sampleBackend } from './support/gateway.ts';
import { uniqueName, useLab } from './support/lab.ts';

const GW_API = 'gateway.networking.k8s.io/v1';
const VENDOR = 'gateway.gwvendor.dev/v1alpha1';
const EP_NS = 'extproc';
const lab = useLab();
const ns = uniqueName('s28-extproc');
const host = 's28.example.com';
const grantName = `allow-${ns}`;
const policyRef = `TrafficPolicy/${ns}/proc`;
artifactNamespaces(ns);

const extension = (backend: string, extra = '') => `
apiVersion: gateway.gwvendor.dev/v1alpha1
kind: GatewayExtension
metadata: {name: proc, namespace: ${ns}}
spec:
  extProc:
    grpcService:
      backendRef: ${backend}
    messageTimeout: 2s
${extra}`;

const grant = `
apiVersion: gateway.networking.k8s.io/v1beta1
kind: ReferenceGrant
metadata: {name: ${grantName}, namespace: ${EP_NS}}
spec:
  from: [{group: gateway.gwvendor.dev, kind: GatewayExtension, namespace: ${ns}}]
  to: [{group: "", kind: Service}]
`;

describe('ext_proc: a processor adding a header (and the missing grant that stops it)', () => {
  let admin: AdminSession;
  let url: string;
  const req = (headers: Record<string, string> = {}) => ({ url, path: '/headers', host, headers });

  beforeAll(async () => {
    // Labs started before this scenario existed lack the sample: the lab's own manifest, applied as lab:up does.
    await lab.kube.apply(readManifest('extproc.yaml'));
    await lab.kube.apply(`${gatewayWithRoute(ns, host)}---${extension(`{name: extproc, namespace: ${EP_NS}, port: 9002}`)}---
apiVersion: gateway.gwvendor.dev/v1alpha1
kind: TrafficPolicy
metadata: {name: proc, namespace: ${ns}}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: web}]
  extProc: {extensionRef: {name: proc}}
`);
    await lab.kube.apply(sampleBackend(ns));
    await lab.kube.waitForRollout('extproc', EP_NS, { timeoutMs: 90_000 });
    await lab.kube.waitForCondition(GW_API, 'Gateway', 'gw', ns, 'Programmed', { timeoutMs: 60_000 });
    url = await gatewayUrl(lab.kube, ns, 'gw', 8080);
    admin = await openProxyAdmin(lab.kube, { namespace: ns, name: 'gw' });
  });

  // biome-ignore lint/correctness/noEmptyPattern: vitest passes the suite second; the first argument must be a pattern.
  afterAll(async ({}, suite) => {
    await collectSuiteFailure(suite);
    await admin?.close();
    if (process.env.KEEP === '1') return;
    await lab.k(['delete', 'referencegrant', grantName, '-n', EP_NS, '--ignore-not-found']).catch(() => undefined);
    await lab.k(['delete', 'namespace', ns, '--wait=false']).catch(() => undefined);
  });

  it('the bug: without a ReferenceGrant the processor is not used, and the statuses name the missing grant', async () => {
    const ext = await lab.kube.waitForCondition(VENDOR, 'GatewayExtension', 'proc', ns, 'ResolvedRefs', {
      status: 'False',
      reason: 'RefNotPermitted',
    });
    expect(ext.status.conditions.find((c: any) => c.type === 'ResolvedRefs').message).toContain(
      `no ReferenceGrant in namespace ${EP_NS}`,
    );
    await lab.kube.waitForCondition(VENDOR, 'TrafficPolicy', 'proc', ns, 'Attached', {
      status: 'False',
      reason: 'RefNotPermitted',
    });
    const r = await expectHttpEventually(req(), { status: 200 });
    expect(r.json?.headers?.['X-Extproc-Seen']).toBeUndefined();
  });

  it('the fix: with the grant, config_dump has the ext_proc filter and the upstream sees x-extproc-seen: true', async () => {
    await lab.k(['apply', '-f', '-'], grant);
    await waitFor(`config_dump route for ${host} to take extProc from ${policyRef}`, async () => {
      const hits = findRoutes(await configDump(admin), { host, path: '/headers' });
      return { ok: hits.length > 0 && hits.every((h) => h.provenance.extProc === policyRef), seen: hits };
    });
    expect(JSON.stringify(await configDump(admin))).toContain(`"name":"envoy.filters.http.ext_proc/${ns}/proc"`);
    const r = await expectHttpEventually(req(), {
      status: 200,
      check: (x) => (x.json?.headers?.['X-Extproc-Seen'] ? undefined : 'no X-Extproc-Seen yet'),
    });
    expect(r.json.headers['X-Extproc-Seen']).toEqual(['true']);
    expect(r.json.headers['X-Extproc-Path']).toEqual(['/headers']);
  });

  it('an immediate_response from the processor answers the client', async () => {
    const r = await expectHttpEventually(req({ 'x-extproc-deny': '1' }), { status: 403 });
    expect(r.headers['x-extproc']).toBe('denied');
    expect(r.body).toContain('denied by ext_proc');
  });

  it('the processor is down: 500 until failOpen lets requests through', async () => {
    await lab.kube.apply(`
apiVersion: v1
kind: Service
metadata: {name: proc-down, namespace: ${ns}}
spec:
  selector: {app: no-such-processor}
  ports: [{name: grpc, port: 9002}]
---${extension('{name: proc-down, port: 9002}')}`);
    await expectHttpEventually(req(), { status: 500 });
    await lab.kube.apply(extension('{name: proc-down, port: 9002}', '    failOpen: true\n'));
    await expectHttpEventually(req(), { status: 200 });
  });
});
