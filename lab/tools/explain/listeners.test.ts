// explain on HTTPS listeners (issue 12 item 6): a certificate that does not resolve is named from the listener's own
// status (the control plane's decision, system/controlplane/ir/listeners.ts), and a RefNotPermitted one gets the
// ReferenceGrant YAML that the control plane's referenceAllowed() accepts; `gateway/<name>/<listener>` explains one.
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { referenceAllowed } from '../../../system/controlplane/ir/refgrant.ts';
import type { KObj } from '../../toolkit/kube.ts';
import { explain } from './analyze.ts';
import { parseTarget } from './explain.ts';
import { renderReport } from './render.ts';
import type { World } from './world.ts';

const GW = 'gateway.networking.k8s.io/v1';
const ok = (type: string, reason = type) => ({ type, status: 'True', reason, message: '' });
const bad = (type: string, reason: string, message = '') => ({ type, status: 'False', reason, message });

const REFUSED =
  'listener https: tls.certificateRefs[0]: Gateway in namespace app may not refer to Secret certs/site: no ReferenceGrant in namespace certs allows it';

function world(listenerConditions: any[], grants: KObj[] = []): World {
  return {
    gatewayClasses: [
      {
        apiVersion: GW,
        kind: 'GatewayClass',
        metadata: { name: 'gwvendor' },
        spec: { controllerName: 'gateway.gwvendor.dev/gwvendor' },
      },
    ],
    gateways: [
      {
        apiVersion: GW,
        kind: 'Gateway',
        metadata: { name: 'gw', namespace: 'app' },
        spec: {
          gatewayClassName: 'gwvendor',
          listeners: [
            { name: 'http', protocol: 'HTTP', port: 80 },
            {
              name: 'https',
              protocol: 'HTTPS',
              port: 443,
              hostname: 'site.example.com',
              tls: { mode: 'Terminate', certificateRefs: [{ name: 'site', namespace: 'certs' }] },
            },
          ],
        },
        status: {
          conditions: [ok('Accepted'), ok('Programmed')],
          listeners: [
            { name: 'http', conditions: [ok('Accepted'), ok('ResolvedRefs'), ok('Programmed')] },
            { name: 'https', conditions: listenerConditions },
          ],
        },
      },
    ],
    routes: [],
    l4Routes: [],
    policies: [],
    extensions: [],
    grants,
    services: {},
    proxies: {},
  };
}

describe('explain: HTTPS listeners and their certificates', () => {
  it('RefNotPermitted: names the certificate and prints the ReferenceGrant that the control plane accepts', () => {
    const w = world([ok('Accepted'), bad('ResolvedRefs', 'RefNotPermitted', REFUSED), bad('Programmed', 'Invalid')]);
    const r = explain(w, { kind: 'Gateway', namespace: 'app', name: 'gw' });
    expect(r.healthy).toBe(false);
    const f = r.findings.find((x) => x.level === 'problem' && x.message.includes('certificate not resolved'))!;
    expect(f.message).toBe(
      `listener https (HTTPS port 443 site.example.com): certificate not resolved: ResolvedRefs=False (RefNotPermitted): ${REFUSED}`,
    );
    expect(f.details).toContain('kubectl -n certs get secret site');
    const grant = parse(f.yaml!);
    expect(grant).toEqual({
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'ReferenceGrant',
      metadata: { name: 'allow-gateway-app-to-secret-site', namespace: 'certs' },
      spec: {
        from: [{ group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace: 'app' }],
        to: [{ group: '', kind: 'Secret', name: 'site' }],
      },
    });
    const from = { group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace: 'app' };
    expect(referenceAllowed([grant], from, { group: '', kind: 'Secret', namespace: 'certs', name: 'site' })).toBe(true);
    expect(renderReport(r)).toContain('kind: ReferenceGrant');
    // The HTTP listener is fine and says nothing; the Programmed=False that follows ResolvedRefs is not repeated.
    expect(r.findings.filter((x) => x.message.startsWith('listener https')).length).toBe(1);
  });

  it('InvalidCertificateRef (missing or malformed Secret): named, no grant', () => {
    const msg = 'listener https: tls.certificateRefs[0]: Secret certs/site does not exist';
    const r = explain(
      world([ok('Accepted'), bad('ResolvedRefs', 'InvalidCertificateRef', msg), bad('Programmed', 'Invalid')]),
      {
        kind: 'Gateway',
        namespace: 'app',
        name: 'gw',
      },
    );
    const f = r.findings.find((x) => x.message.includes('certificate not resolved'))!;
    expect(f.message).toContain(`ResolvedRefs=False (InvalidCertificateRef): ${msg}`);
    expect(f.yaml).toBeUndefined();
  });

  it('a client CA of spec.tls.frontend in another namespace (GEP-91): named as such, with the grant for its ConfigMap', () => {
    const msg =
      'spec.tls.frontend.default.validation.caCertificateRefs[0]: Gateway in namespace app may not refer to ConfigMap cas/client-ca: no ReferenceGrant in namespace cas allows it';
    const w = world([
      bad('Accepted', 'NoValidCACertificate', `no valid CA certificate: ${msg}`),
      bad('ResolvedRefs', 'RefNotPermitted', msg),
      bad('Programmed', 'Invalid'),
    ]);
    w.gateways[0]!.spec.tls = {
      frontend: {
        default: { validation: { caCertificateRefs: [{ kind: 'ConfigMap', name: 'client-ca', namespace: 'cas' }] } },
      },
    };
    const r = explain(w, { kind: 'Gateway', namespace: 'app', name: 'gw' });
    const f = r.findings.find((x) => x.message.includes('client CA certificates not resolved'))!;
    expect(f.message).toBe(
      `listener https (HTTPS port 443 site.example.com): client CA certificates not resolved: ResolvedRefs=False (RefNotPermitted): ${msg}`,
    );
    expect(f.details).toContain('kubectl -n cas get configmap client-ca');
    const grant = parse(f.yaml!);
    expect(grant.spec.to).toEqual([{ group: '', kind: 'ConfigMap', name: 'client-ca' }]);
    const from = { group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace: 'app' };
    expect(referenceAllowed([grant], from, { group: '', kind: 'ConfigMap', namespace: 'cas', name: 'client-ca' })).toBe(
      true,
    );
    expect(r.findings.some((x) => x.message.includes(': certificate not resolved'))).toBe(false);
  });

  it('resolved: an ok line naming its Secrets; gateway/<name>/<listener> explains that listener only', () => {
    const w = world([ok('Accepted'), ok('ResolvedRefs'), ok('Programmed')]);
    const t = parseTarget('gateway/gw/https', 'app');
    expect(t).toEqual({ kind: 'Gateway', namespace: 'app', name: 'gw', listener: 'https' });
    const r = explain(w, t);
    expect(r.healthy).toBe(true);
    expect(r.findings.map((f) => f.message)).toContain(
      'listener https (HTTPS port 443 site.example.com): certificates resolved (Secret certs/site)',
    );
    const none = explain(w, parseTarget('gateway/gw/nope', 'app'));
    expect(none.findings.find((f) => f.level === 'problem')?.message).toBe(
      'Gateway app/gw has no listener nope (listeners: http, https)',
    );
    expect(() => parseTarget('httproute/web/x', 'app')).toThrow(/gateway\/<name>\/<listener>/);
    // A healthy plaintext listener: nothing to say, and no "no listener" either.
    expect(
      explain(w, parseTarget('gateway/gw/http', 'app')).findings.filter((f) => f.message.includes('listener')),
    ).toEqual([]);
  });

  it('from a route: only the listener its parentRef names by sectionName; a policy: none', () => {
    const w = world([ok('Accepted'), bad('ResolvedRefs', 'RefNotPermitted', REFUSED), bad('Programmed', 'Invalid')]);
    const route = (sectionName?: string): KObj => ({
      apiVersion: GW,
      kind: 'HTTPRoute',
      metadata: { name: 'web', namespace: 'app' },
      spec: { parentRefs: [{ name: 'gw', ...(sectionName ? { sectionName } : {}) }], rules: [{}] },
      status: { parents: [] },
    });
    const certProblem = (r: ReturnType<typeof explain>) =>
      r.findings.some((f) => f.message.includes('certificate not resolved'));
    w.routes = [route('http')];
    expect(certProblem(explain(w, { kind: 'HTTPRoute', namespace: 'app', name: 'web' }))).toBe(false);
    w.routes = [route('https')];
    expect(certProblem(explain(w, { kind: 'HTTPRoute', namespace: 'app', name: 'web' }))).toBe(true);
    w.routes = [route()];
    expect(certProblem(explain(w, { kind: 'HTTPRoute', namespace: 'app', name: 'web' }))).toBe(true);
  });
});
