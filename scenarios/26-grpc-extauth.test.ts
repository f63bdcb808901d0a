// Issue 13 item 3: ext auth over gRPC, as a user reaches for it after the HTTP form (scenario 07). A GatewayExtension
// with extAuth.grpcService points at the ext-auth sample's gRPC port (Service extauth:9001, Envoy's
// envoy.service.auth.v3.Authorization/Check); the proxy calls it through an HTTP/2 cluster named in the ext_authz
// filter's grpc_service.envoy_grpc, as Envoy does. Requests without `x-ext-authz: allow` get the service's 403 (flag
// UAEX), requests with it pass and the upstream sees the header the service set. The realistic bug: the auth service
// is down (here a Service with no endpoints): every request is refused with 403 and an empty body until failOpen lets
// them through, Envoy's failure_mode_allow semantics. Bad input: an extension setting both services is refused by
// the API server with the CRD's message.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AdminSession, configDump, findRoutes, openProxyAdmin } from '../lab/toolkit/admin.ts';
import { expectHttpEventually } from '../lab/toolkit/http.ts';
import { waitFor } from '../lab/toolkit/wait.ts';
import { artifactNamespaces, collectSuiteFailure } from './support/artifacts.ts';
import { gatewayUrl, gatewayWithRoute, sampleBackend } from './support/gateway.ts';
import { uniqueName, useLab } from './support/lab.ts';

const GW_API = 'gateway.networking.k8s.io/v1';
const VENDOR = 'gateway.gwvendor.dev/v1alpha1';
const EXTAUTH_NS = 'extauth';
const lab = useLab();
const ns = uniqueName('s26-grpc-extauth');
const host = 's26.example.com';
const grantName = `allow-${ns}`;
const policyRef = `TrafficPolicy/${ns}/auth`;
artifactNamespaces(ns);

const extension = (spec: string) => `
apiVersion: gateway.gwvendor.dev/v1alpha1
kind: GatewayExtension
metadata: {name: grpc-auth, namespace: ${ns}}
spec:
  extAuth:
${spec}
`;

describe('ext auth over gRPC (Authorization/Check): deny, allow, a service that is down', () => {
  let admin: AdminSession;
  let url: string;
  const req = (headers: Record<string, string> = {}) => ({ url, path: '/headers', host, headers });

  beforeAll(async () => {
    await lab.kube.apply(`${gatewayWithRoute(ns, host)}---
apiVersion: gateway.networking.k8s.io/v1beta1
kind: ReferenceGrant
metadata: {name: ${grantName}, namespace: ${EXTAUTH_NS}}
spec:
  from: [{group: gateway.gwvendor.dev, kind: GatewayExtension, namespace: ${ns}}]
  to: [{group: "", kind: Service}]
---${extension(`    grpcService:
      backendRef: {name: extauth, namespace: ${EXTAUTH_NS}, port: 9001}
      timeout: 2s`)}---
apiVersion: gateway.gwvendor.dev/v1alpha1
kind: TrafficPolicy
metadata: {name: auth, namespace: ${ns}}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: web}]
  extAuth: {extensionRef: {name: grpc-auth}}
---
apiVersion: v1
kind: Service
metadata: {name: auth-down, namespace: ${ns}}
spec:
  selector: {app: no-such-auth-service}
  ports: [{name: grpc, port: 9001, appProtocol: kubernetes.io/h2c}]
`);
    await lab.kube.apply(sampleBackend(ns));
    await lab.kube.waitForRollout('extauth', EXTAUTH_NS, { timeoutMs: 60_000 });
    await lab.kube.waitForCondition(GW_API, 'Gateway', 'gw', ns, 'Programmed', { timeoutMs: 60_000 });
    url = await gatewayUrl(lab.kube, ns, 'gw', 8080);
    admin = await openProxyAdmin(lab.kube, { namespace: ns, name: 'gw' });
  });

  // biome-ignore lint/correctness/noEmptyPattern: vitest passes the suite second; the first argument must be a pattern.
  afterAll(async ({}, suite) => {
    await collectSuiteFailure(suite);
    await admin?.close();
    if (process.env.KEEP === '1') return;
    await lab.k(['delete', 'referencegrant', grantName, '-n', EXTAUTH_NS, '--ignore-not-found']).catch(() => undefined);
    await lab.k(['delete', 'namespace', ns, '--wait=false']).catch(() => undefined);
  });

  it('the extension resolves its gRPC service; config_dump has ext_authz with grpc_service.envoy_grpc on an HTTP/2 cluster', async () => {
    const ext = await lab.kube.waitForCondition(VENDOR, 'GatewayExtension', 'grpc-auth', ns, 'ResolvedRefs');
    expect(ext.status.conditions.find((c: any) => c.type === 'ResolvedRefs').message).toBe(
      `backend Service ${EXTAUTH_NS}/extauth:9001 (gRPC)`,
    );
    await waitFor(`config_dump route for ${host} to take extAuth from ${policyRef}`, async () => {
      const hits = findRoutes(await configDump(admin), { host, path: '/headers' });
      return { ok: hits.length > 0 && hits.every((h) => h.provenance.extAuth === policyRef), seen: hits };
    });
    const dump = JSON.stringify(await configDump(admin));
    expect(dump).toContain('"grpc_service":{"envoy_grpc":{"cluster_name":"kube_extauth_extauth_9001"}');
    expect(dump).toMatch(/"name":"kube_extauth_extauth_9001".*?"http2_protocol_options"/);
  });

  it('403 from the service (UAEX) without x-ext-authz: allow; 200 with it, and the upstream sees the service’s header', async () => {
    const denied = await expectHttpEventually(req({ 'x-ext-authz': 'deny' }), { status: 403 });
    expect(denied.body).toMatch(/^denied by ext_authz: header x-ext-authz is "deny", not allow/);
    expect(denied.headers['x-ext-authz-check-result']).toBe('denied');
    await expectHttpEventually(req(), { status: 403 });
    const ok = await expectHttpEventually(req({ 'x-ext-authz': 'allow' }), { status: 200 });
    expect(ok.json?.headers?.['X-Ext-Authz-Check-Result']).toEqual(['allowed']);
  });

  it('an extension setting both httpService and grpcService is refused, naming the rule', async () => {
    const err = await lab
      .k(
        ['apply', '-f', '-'],
        extension(`    httpService: {backendRef: {name: extauth, namespace: ${EXTAUTH_NS}, port: 9000}}
    grpcService: {backendRef: {name: extauth, namespace: ${EXTAUTH_NS}, port: 9001}}`),
      )
      .then(
        () => '',
        (e: Error) => e.message,
      );
    expect(err).toContain('spec.extAuth');
    expect(err).toContain('set exactly one of httpService and grpcService');
    // Nothing stored: the extension still points at the sample's gRPC port.
    const ext = JSON.parse(await lab.k(['get', 'gatewayextension', 'grpc-auth', '-n', ns, '-o', 'json']));
    expect(ext.spec.extAuth.httpService).toBeUndefined();
  });

  it('the service is down: 403 with an empty body (ext_authz_error), then failOpen lets requests through', async () => {
    await lab.kube.apply(
      extension(`    grpcService:
      backendRef: {name: auth-down, port: 9001}
      timeout: 500ms`),
    );
    const refused = await expectHttpEventually(req({ 'x-ext-authz': 'allow' }), { status: 403 });
    expect(refused.body).toBe('');
    expect(refused.headers['x-ext-authz-check-result']).toBeUndefined();
    await lab.kube.apply(
      extension(`    grpcService:
      backendRef: {name: auth-down, port: 9001}
      timeout: 500ms
    failOpen: true`),
    );
    const through = await expectHttpEventually(req(), { status: 200 });
    expect(through.json?.headers).toBeTypeOf('object');
  });
});
