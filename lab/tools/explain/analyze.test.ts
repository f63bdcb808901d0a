import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { referenceAllowed } from '../../../system/controlplane/ir/refgrant.ts';
import type { ConfigDump } from '../../toolkit/admin.ts';
import type { KObj } from '../../toolkit/kube.ts';
import { explain, gatewaysNeeded, type Report, servicesNeeded } from './analyze.ts';
import { parseTarget } from './explain.ts';
import { renderReport } from './render.ts';
import type { ProxyPodView, World, XdsTypeState } from './world.ts';

const GW = 'gateway.networking.k8s.io/v1';
const V = 'gateway.gwvendor.dev/v1alpha1';
const PROV = 'merge.TrafficPolicy.gateway.gwvendor.dev';

const ok = (type: string, reason = type) => ({ type, status: 'True', reason, message: '' });
const bad = (type: string, reason: string, message = '') => ({ type, status: 'False', reason, message });

function route(name: string, o: { labels?: Record<string, string>; conditions?: any[]; backends?: any[] } = {}): KObj {
  return {
    apiVersion: GW,
    kind: 'HTTPRoute',
    metadata: { name, namespace: 'app', labels: o.labels ?? {} },
    spec: { parentRefs: [{ name: 'gw' }], rules: [{ backendRefs: o.backends ?? [{ name: 'web', port: 8000 }] }] },
    status: {
      parents: [
        {
          parentRef: { name: 'gw', namespace: 'app' },
          controllerName: 'gateway.gwvendor.dev/gwvendor',
          conditions: o.conditions ?? [ok('Accepted'), ok('ResolvedRefs')],
        },
      ],
    },
  };
}

function policy(name: string, spec: any, created: string, status: any = {}): KObj {
  return {
    apiVersion: V,
    kind: 'TrafficPolicy',
    metadata: { name, namespace: 'app', creationTimestamp: created as unknown as Date },
    spec,
    status,
  };
}

const targetWeb = [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: 'web' }];

/** A config_dump with one route per (route name, provenance). */
function dump(routes: { name: string; provenance?: Record<string, string> }[]): ConfigDump {
  return {
    configs: [
      {
        '@type': 'type.googleapis.com/envoy.admin.v3.RoutesConfigDump',
        dynamic_route_configs: [
          {
            route_config: {
              name: 'listener~8080',
              virtual_hosts: [
                {
                  name: 'vh',
                  domains: ['*'],
                  routes: routes.map((r) => ({
                    name: r.name,
                    match: { prefix: '/' },
                    ...(r.provenance ? { metadata: { filter_metadata: { [PROV]: r.provenance } } } : {}),
                  })),
                },
              ],
            },
          },
        ],
      },
    ],
  };
}

function pod(
  name: string,
  o: { ready?: boolean; dump?: ConfigDump; waiting?: string; events?: string[] } = {},
): ProxyPodView {
  const ready = o.ready ?? true;
  return {
    pod: name,
    ready,
    dump: ready ? (o.dump ?? dump([])) : undefined,
    summary: {
      namespace: 'app',
      name,
      phase: ready ? 'Running' : 'Pending',
      ready,
      deleting: false,
      labels: {},
      conditions: [],
      initContainers: [],
      containers: [
        {
          name: 'gwvendor-proxy',
          image: 'x',
          ready,
          restartCount: 0,
          state: ready ? 'running' : 'waiting',
          ...(o.waiting ? { reason: o.waiting } : {}),
        },
      ],
      events: (o.events ?? []).map((m) => ({
        object: `Pod/${name}`,
        type: 'Warning',
        reason: 'Failed',
        message: m,
        count: 1,
      })),
    },
  };
}

function world(
  o: Partial<World> & { pods?: ProxyPodView[]; xds?: Record<string, Record<string, XdsTypeState>> } = {},
): World {
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
        metadata: { name: 'gw', namespace: 'app', labels: { tier: 'edge' } },
        spec: { gatewayClassName: 'gwvendor' },
        status: { conditions: [ok('Accepted'), ok('Programmed')] },
      },
    ],
    routes: o.routes ?? [route('web', { labels: { app: 'web' } })],
    ...(o.grpcRoutes ? { grpcRoutes: o.grpcRoutes } : {}),
    l4Routes: o.l4Routes ?? [],
    policies: o.policies ?? [],
    extensions: o.extensions ?? [],
    grants: o.grants ?? [],
    services: o.services ?? {},
    proxies: o.proxies ?? {
      'app/gw': {
        gateway: { namespace: 'app', name: 'gw' },
        pods: o.pods ?? [pod('gw-1', { dump: dump([{ name: 'httproute/app/web/rule/0/match/0' }]) })],
        ...(o.xds ? { xds: o.xds } : {}),
      },
    },
  };
}

const problems = (r: Report) => r.findings.filter((f) => f.level === 'problem');

describe('explain analysis', () => {
  it('a healthy route is healthy: accepted, resolved, in the proxy config, proxy running', () => {
    const r = explain(world(), { kind: 'HTTPRoute', namespace: 'app', name: 'web' });
    expect(problems(r)).toEqual([]);
    expect(r.healthy).toBe(true);
    expect(r.findings.map((f) => f.message)).toEqual(
      expect.arrayContaining(['accepted by Gateway app/gw', 'backends resolved', 'proxy running: gw-1']),
    );
  });

  it('rule 1: a selector that matches nothing, with the labels it wanted and the labels the routes have', () => {
    const p = policy(
      'by-label',
      {
        targetSelectors: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', matchLabels: { app: 'webx' } }],
        timeouts: { request: '7s' },
      },
      '2026-01-01T00:00:00Z',
      { conditions: [ok('Accepted', 'Valid'), bad('Attached', 'TargetNotFound')] },
    );
    const w = world({ policies: [p], routes: [route('web', { labels: { app: 'web' } }), route('other')] });
    const r = explain(w, { kind: 'TrafficPolicy', namespace: 'app', name: 'by-label' });
    expect(r.healthy).toBe(false);
    const f = problems(r)[0];
    expect(f.rule).toBe(1);
    expect(f.details).toEqual([
      'it selects HTTPRoutes in namespace app labelled app=webx',
      '  HTTPRoute web has app=web',
      '  HTTPRoute other has (no labels)',
    ]);
    expect(r.policies[0]).toMatchObject({ verdict: 'not applied', notApplied: ['timeouts'] });
    // From the route it nearly matches (same label key), a problem of that route; from another route only a note.
    const fromWeb = explain(w, { kind: 'HTTPRoute', namespace: 'app', name: 'web' });
    expect(problems(fromWeb).map((x) => x.rule)).toEqual([1]);
    const w2 = world({ policies: [p], routes: [route('web', { labels: { tier: 'x' } })] });
    const fromOther = explain(w2, { kind: 'HTTPRoute', namespace: 'app', name: 'web' });
    expect(fromOther.healthy).toBe(true);
    expect(fromOther.findings.find((x) => x.rule === 1)?.level).toBe('note');
  });

  it('rule 2: the newer policy is overridden by the older one, named with both creation times', () => {
    const old = policy('old', { targetRefs: targetWeb, timeouts: { request: '7s' } }, '2026-01-01T00:00:00Z');
    const newer = policy(
      'new',
      { targetRefs: targetWeb, timeouts: { request: '9s' }, retry: { attempts: 2 } },
      '2026-01-02T00:00:00Z',
      {
        ancestors: [{ ancestorRef: { name: 'gw' }, conditions: [ok('Accepted', 'Valid'), ok('Attached', 'Merged')] }],
      },
    );
    const w = world({
      policies: [old, newer],
      pods: [
        pod('gw-1', {
          dump: dump([
            {
              name: 'httproute/app/web/rule/0/match/0',
              provenance: { timeouts: 'TrafficPolicy/app/old', retry: 'TrafficPolicy/app/new' },
            },
          ]),
        }),
      ],
    });
    const r = explain(w, { kind: 'HTTPRoute', namespace: 'app', name: 'web' });
    const f = problems(r);
    expect(f).toHaveLength(1);
    expect(f[0]).toMatchObject({ rule: 2, subject: 'TrafficPolicy app/new' });
    expect(f[0].message).toContain('overridden by the older TrafficPolicy/app/old for timeouts');
    expect(f[0].details).toEqual([
      'TrafficPolicy/app/old created 2026-01-01T00:00:00Z',
      'TrafficPolicy/app/new created 2026-01-02T00:00:00Z',
    ]);
    expect(r.policies.find((p) => p.policy === 'app/old')).toMatchObject({ verdict: 'applied' });
    expect(r.policies.find((p) => p.policy === 'app/new')).toMatchObject({
      verdict: 'partly applied',
      applied: ['retry'],
      notApplied: ['timeouts'],
    });
  });

  it('rule 2 seen from a status that disagrees: Overridden in status, yet present in config_dump', () => {
    const p = policy('p', { targetRefs: targetWeb, timeouts: { request: '7s' } }, '2026-01-01T00:00:00Z', {
      ancestors: [
        { ancestorRef: { name: 'gw' }, conditions: [ok('Accepted', 'Valid'), bad('Attached', 'Overridden')] },
      ],
    });
    const w = world({
      policies: [p],
      pods: [
        pod('gw-1', {
          dump: dump([{ name: 'httproute/app/web/rule/0/match/0', provenance: { timeouts: 'TrafficPolicy/app/p' } }]),
        }),
      ],
    });
    const r = explain(w, { kind: 'TrafficPolicy', namespace: 'app', name: 'p' });
    expect(r.findings.find((f) => f.disagreement)?.message).toBe(
      'status says Overridden, but the proxy config has its settings',
    );
  });

  it('rule 3: a cross-namespace extension without a grant prints the ReferenceGrant that allows it', () => {
    const ext: KObj = {
      apiVersion: V,
      kind: 'GatewayExtension',
      metadata: { name: 'auth', namespace: 'app' },
      spec: { extAuth: { httpService: { backendRef: { name: 'extauth', namespace: 'extauth', port: 9000 } } } },
    };
    const p = policy(
      'auth',
      { targetRefs: targetWeb, extAuth: { extensionRef: { name: 'auth' } } },
      '2026-01-01T00:00:00Z',
    );
    const w = world({
      policies: [p],
      extensions: [ext],
      services: { 'extauth/extauth': { metadata: { name: 'extauth' } } },
    });
    expect(servicesNeeded(w, { kind: 'HTTPRoute', namespace: 'app', name: 'web' })).toEqual(['extauth/extauth']);
    const r = explain(w, { kind: 'HTTPRoute', namespace: 'app', name: 'web' });
    const f = problems(r).find((x) => x.rule === 3)!;
    expect(f.subject).toBe('TrafficPolicy app/auth');
    const grant = parse(f.yaml!);
    expect(grant).toEqual({
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'ReferenceGrant',
      metadata: { name: 'allow-gatewayextension-app-to-service-extauth', namespace: 'extauth' },
      spec: {
        from: [{ group: 'gateway.gwvendor.dev', kind: 'GatewayExtension', namespace: 'app' }],
        to: [{ group: '', kind: 'Service', name: 'extauth' }],
      },
    });
    // The printed grant is one the control plane's own rule accepts.
    const from = { group: 'gateway.gwvendor.dev', kind: 'GatewayExtension', namespace: 'app' };
    const to = { group: '', kind: 'Service', namespace: 'extauth', name: 'extauth' };
    expect(referenceAllowed([grant], from, to)).toBe(true);
    // With it (and ext auth in the config), the cause is gone.
    const fixed = world({
      policies: [p],
      extensions: [ext],
      grants: [grant],
      pods: [
        pod('gw-1', {
          dump: dump([{ name: 'httproute/app/web/rule/0/match/0', provenance: { extAuth: 'TrafficPolicy/app/auth' } }]),
        }),
      ],
    });
    expect(explain(fixed, { kind: 'GatewayExtension', namespace: 'app', name: 'auth' }).healthy).toBe(true);
  });

  it('rule 3 for a rate-limit or ext-proc extension too: the field named, the grant printed, the extension’s users found', () => {
    for (const [field, spec, extSpec] of [
      [
        'rateLimit',
        { rateLimit: { global: { extensionRef: { name: 'x' }, descriptors: [{ entries: [{ remoteAddress: {} }] }] } } },
        {
          rateLimit: {
            grpcService: { backendRef: { name: 'ratelimit', namespace: 'ratelimit', port: 8081 } },
            domain: 'd',
          },
        },
      ],
      [
        'extProc',
        { extProc: { extensionRef: { name: 'x' } } },
        { extProc: { grpcService: { backendRef: { name: 'ratelimit', namespace: 'ratelimit', port: 8081 } } } },
      ],
    ] as const) {
      const ext: KObj = {
        apiVersion: V,
        kind: 'GatewayExtension',
        metadata: { name: 'x', namespace: 'app' },
        spec: extSpec,
      };
      const p = policy('p', { targetRefs: targetWeb, ...spec }, '2026-01-01T00:00:00Z');
      const w = world({
        policies: [p],
        extensions: [ext],
        services: { 'ratelimit/ratelimit': { metadata: { name: 'ratelimit' } } },
      });
      expect(servicesNeeded(w, { kind: 'HTTPRoute', namespace: 'app', name: 'web' })).toEqual(['ratelimit/ratelimit']);
      const f = problems(explain(w, { kind: 'HTTPRoute', namespace: 'app', name: 'web' })).find((x) => x.rule === 3)!;
      expect(f.message, field).toMatch(new RegExp(`^${field} is not applied: GatewayExtension app/x: `));
      expect(parse(f.yaml!).metadata.namespace).toBe('ratelimit');
      const fromExt = explain(w, { kind: 'GatewayExtension', namespace: 'app', name: 'x' });
      expect(
        fromExt.policies.map((x) => x.policy),
        field,
      ).toEqual(['app/p']);
    }
  });

  it('an unresolved backend: the route reason, and a cross-namespace one gets its grant', () => {
    const w = world({
      routes: [
        route('web', {
          conditions: [ok('Accepted'), bad('ResolvedRefs', 'RefNotPermitted', 'no grant')],
          backends: [{ name: 'svc', namespace: 'other', port: 80 }],
        }),
      ],
    });
    const f = problems(explain(w, { kind: 'HTTPRoute', namespace: 'app', name: 'web' }));
    expect(f[0].message).toBe('backends do not resolve: ResolvedRefs=False (RefNotPermitted): no grant');
    expect(parse(f[0].yaml!).spec.from).toEqual([
      { group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', namespace: 'app' },
    ]);
  });

  it('a route attached through a ListenerSet: its parent status as a note (or a problem), not "no parentRefs"', () => {
    const viaSet = (accepted: any): KObj => ({
      ...route('web'),
      spec: { parentRefs: [{ kind: 'ListenerSet', name: 'extra' }], rules: [] },
      status: {
        parents: [
          {
            parentRef: { kind: 'ListenerSet', name: 'extra' },
            controllerName: 'gateway.gwvendor.dev/gwvendor',
            conditions: [accepted, ok('ResolvedRefs')],
          },
        ],
      },
    });
    const good = explain(world({ routes: [viaSet(ok('Accepted'))] }), {
      kind: 'HTTPRoute',
      namespace: 'app',
      name: 'web',
    });
    expect(problems(good)).toEqual([]);
    expect(good.findings.map((f) => f.message)).toContain(
      'parentRef ListenerSet app/extra: Accepted=True (Accepted) (explain does not check ListenerSet listeners in the proxy config)',
    );
    const refused = viaSet(bad('Accepted', 'NoMatchingParent', 'ListenerSet app/extra is not attached'));
    const f = problems(explain(world({ routes: [refused] }), { kind: 'HTTPRoute', namespace: 'app', name: 'web' }));
    expect(f.map((x) => x.message)).toEqual([
      'parentRef ListenerSet app/extra: Accepted=False (NoMatchingParent): ListenerSet app/extra is not attached (explain does not check ListenerSet listeners in the proxy config)',
    ]);
  });

  it('a proxy pod that is not running: its waiting reason and last events', () => {
    const w = world({
      pods: [pod('gw-1', { ready: false, waiting: 'ImagePullBackOff', events: ['Failed to pull image'] })],
    });
    const f = problems(explain(w, { kind: 'HTTPRoute', namespace: 'app', name: 'web' }));
    expect(f).toHaveLength(1);
    expect(f[0].message).toBe('the proxy pod gw-1 is not running: container gwvendor-proxy waiting (ImagePullBackOff)');
    expect(f[0].details).toEqual(['event Warning Failed: Failed to pull image', 'kubectl -n app describe pod gw-1']);
  });

  it('a NACK that still stands is a problem; one a later version cleared is not', () => {
    const nack = { version: '3', detail: 'Invalid regex' };
    const standing = world({
      xds: { 'gw-1.app': { routes: { status: 'NACKED', version_acked: '2', last_nack: nack } } },
    });
    const f = problems(explain(standing, { kind: 'Gateway', namespace: 'app', name: 'gw' }));
    expect(f.map((x) => x.message)).toEqual(['proxy gw-1.app rejected (NACK) the routes of version 3: Invalid regex']);
    const cleared = world({
      xds: { 'gw-1.app': { routes: { status: 'ACKED', version_acked: '4', last_nack: nack } } },
    });
    expect(explain(cleared, { kind: 'Gateway', namespace: 'app', name: 'gw' }).healthy).toBe(true);
  });

  it('Accepted in status but absent from config_dump is a disagreement', () => {
    const w = world({ pods: [pod('gw-1', { dump: dump([]) })] });
    const f = problems(explain(w, { kind: 'HTTPRoute', namespace: 'app', name: 'web' }));
    expect(f).toEqual([expect.objectContaining({ disagreement: true })]);
    expect(f[0].message).toBe(
      "status says Accepted by Gateway app/gw, but no route of it is in that Gateway's proxy config_dump",
    );
  });

  it('an unknown object says what exists instead; only the Gateways involved are read', () => {
    const r = explain(world(), { kind: 'HTTPRoute', namespace: 'app', name: 'nope' });
    expect(r.found).toBe(false);
    expect(r.findings[0].details).toEqual(['HTTPRoutes in app: web']);
    expect(gatewaysNeeded(world(), { kind: 'HTTPRoute', namespace: 'app', name: 'web' })).toEqual([
      { namespace: 'app', name: 'gw' },
    ]);
  });

  it('parses kubectl-style targets and rejects others with the usage', () => {
    expect(parseTarget('httproutes/web', 'ns')).toEqual({ kind: 'HTTPRoute', namespace: 'ns', name: 'web' });
    expect(parseTarget('tp/p1', 'ns').kind).toBe('TrafficPolicy');
    expect(parseTarget('tcproute/db', 'ns').kind).toBe('TCPRoute');
    expect(parseTarget('udproutes.gateway.networking.k8s.io/dns', 'ns').kind).toBe('UDPRoute');
    expect(parseTarget('gatewayextension.gateway.gwvendor.dev/e', 'ns').kind).toBe('GatewayExtension');
    expect(() => parseTarget('service/web', 'ns')).toThrow(/explain needs <kind>\/<name>, kind one of HTTPRoute/);
  });
});

describe('explain: TCPRoute and UDPRoute', () => {
  const tcpRoute = (conditions: any[], backends: any[] = [{ name: 'db', port: 5432 }]): KObj => ({
    apiVersion: GW,
    kind: 'TCPRoute',
    metadata: { name: 'db', namespace: 'app' },
    spec: { parentRefs: [{ name: 'gw', sectionName: 'tcp' }], rules: [{ backendRefs: backends }] },
    status: {
      parents: [
        { parentRef: { name: 'gw', sectionName: 'tcp' }, controllerName: 'gateway.gwvendor.dev/gwvendor', conditions },
      ],
    },
  });
  const tcpDump = (cluster: string): ConfigDump => ({
    configs: [
      {
        '@type': 'type.googleapis.com/envoy.admin.v3.ListenersConfigDump',
        dynamic_listeners: [
          {
            name: 'listener~5432',
            active_state: {
              listener: {
                name: 'listener~5432',
                filter_chains: [
                  {
                    filters: [
                      { name: 'envoy.filters.network.tcp_proxy', typed_config: { stat_prefix: 'tcp-5432', cluster } },
                    ],
                  },
                ],
              },
            },
          },
        ],
      },
    ],
  });
  const target = { kind: 'TCPRoute' as const, namespace: 'app', name: 'db' };
  const withProxy = (route: KObj, cluster: string) =>
    world({ l4Routes: [route], pods: [pod('gw-1', { dump: tcpDump(cluster) })] });

  it('a healthy TCPRoute: accepted, resolved, a tcp_proxy listener to its backend in config_dump', () => {
    const r = explain(withProxy(tcpRoute([ok('Accepted'), ok('ResolvedRefs')]), 'kube_app_db_5432'), target);
    expect(problems(r)).toEqual([]);
    expect(r.findings.map((f) => f.message)).toEqual(
      expect.arrayContaining([
        'accepted by Gateway app/gw',
        'backends resolved',
        'in the proxy config of Gateway app/gw: a tcp_proxy listener to its backends in config_dump of gw-1',
      ]),
    );
    expect(gatewaysNeeded(withProxy(tcpRoute([]), 'x'), target)).toEqual([{ namespace: 'app', name: 'gw' }]);
  });

  it('accepted but not in the proxy config (an older route holds the listener) is a disagreement', () => {
    const r = explain(withProxy(tcpRoute([ok('Accepted'), ok('ResolvedRefs')]), 'kube_app_older_5432'), target);
    expect(problems(r).map((f) => [f.message, f.disagreement])).toEqual([
      [
        "status says Accepted by Gateway app/gw, but no listener of that Gateway's proxy config_dump sends to its backends",
        true,
      ],
    ]);
  });

  it('a cross-namespace backend without a grant prints the ReferenceGrant from TCPRoute', () => {
    const route = tcpRoute(
      [ok('Accepted'), bad('ResolvedRefs', 'RefNotPermitted', 'no grant')],
      [{ name: 'db', namespace: 'data', port: 5432 }],
    );
    const f = problems(explain(withProxy(route, 'blackhole-cluster'), target));
    expect(f[0].message).toBe('backends do not resolve: ResolvedRefs=False (RefNotPermitted): no grant');
    expect(parse(f[0].yaml!).spec.from).toEqual([
      { group: 'gateway.networking.k8s.io', kind: 'TCPRoute', namespace: 'app' },
    ]);
  });

  it('a TLSRoute: its cluster in one of the SNI filter chains of its TLS listener', () => {
    const tls: KObj = { ...tcpRoute([ok('Accepted'), ok('ResolvedRefs')]), kind: 'TLSRoute' };
    const dump = tcpDump('kube_other_x_443');
    const chains = dump.configs[0].dynamic_listeners[0].active_state.listener.filter_chains;
    chains.push({
      filter_chain_match: { server_names: ['db.example.com'] },
      filters: [{ name: 'envoy.filters.network.tcp_proxy', typed_config: { cluster: 'kube_app_db_5432' } }],
    });
    const r = explain(world({ l4Routes: [tls], pods: [pod('gw-1', { dump })] }), { ...target, kind: 'TLSRoute' });
    expect(problems(r)).toEqual([]);
    expect(r.findings.map((f) => f.message)).toContain(
      'in the proxy config of Gateway app/gw: a tcp_proxy listener to its backends in config_dump of gw-1',
    );
    expect(parseTarget('tlsroute/db', 'app').kind).toBe('TLSRoute');
  });

  it('an unknown TCPRoute says which exist', () => {
    const r = explain(world({ l4Routes: [tcpRoute([])] }), { kind: 'TCPRoute', namespace: 'app', name: 'nope' });
    expect(r.found).toBe(false);
    expect(r.findings[0].details).toEqual(['TCPRoutes in app: db']);
  });
});

describe('explain analysis across the proxy pods of one Gateway', () => {
  it('a setting only some pods hold is not applied, and the pods that lack it are named', () => {
    const p = policy('p', { targetRefs: targetWeb, timeouts: { request: '7s' } }, '2026-01-01T00:00:00Z');
    const route = { name: 'httproute/app/web/rule/0/match/0' };
    const w = world({
      policies: [p],
      pods: [
        pod('gw-1', { dump: dump([{ ...route, provenance: { timeouts: 'TrafficPolicy/app/p' } }]) }),
        pod('gw-2', { dump: dump([route]) }),
      ],
    });
    const r = explain(w, { kind: 'TrafficPolicy', namespace: 'app', name: 'p' });
    expect(r.policies[0]).toMatchObject({ verdict: 'not applied', notApplied: ['timeouts'] });
    expect(problems(r).map((f) => f.message)).toEqual([
      'its timeouts is in the config_dump of gw-1 but not of gw-2: the proxies of one Gateway disagree',
    ]);
  });
});

// Issue 17 point 4: explain renders the control plane's attachment decision (system/controlplane/ir/attach-policies.ts)
// rather than deciding again. A policy on an HTTPRoute that overrides one on its Gateway is the designed precedence
// (interfaces page, "Policies": route > gateway, before age), not rule 2; and a Gateway policy applied to another route
// of the Gateway is what its status says, not a disagreement.
describe('explain renders the control plane attachment decision', () => {
  const GW_TARGET = [{ group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'gw' }];
  // The Gateway's policy is the older one: were precedence by age alone, it would win on web too.
  const onGateway = policy(
    'on-gateway',
    { targetRefs: GW_TARGET, timeouts: { request: '5s' } },
    '2026-01-01T00:00:00Z',
    {
      conditions: [ok('Accepted', 'Valid'), ok('Attached', 'Attached')],
      ancestors: [{ ancestorRef: { name: 'gw' }, conditions: [ok('Accepted', 'Valid'), ok('Attached', 'Attached')] }],
    },
  );
  const onRoute = policy('on-route', { targetRefs: targetWeb, timeouts: { request: '9s' } }, '2026-01-02T00:00:00Z', {
    conditions: [ok('Accepted', 'Valid'), ok('Attached', 'Attached')],
    ancestors: [{ ancestorRef: { name: 'gw' }, conditions: [ok('Accepted', 'Valid'), ok('Attached', 'Attached')] }],
  });
  /** web takes timeouts from its own policy, other from the Gateway's: what the control plane computes. */
  const w = () =>
    world({
      policies: [onGateway, onRoute],
      routes: [route('web', { labels: { app: 'web' } }), route('other')],
      pods: [
        pod('gw-1', {
          dump: dump([
            { name: 'httproute/app/web/rule/0/match/0', provenance: { timeouts: 'TrafficPolicy/app/on-route' } },
            { name: 'httproute/app/other/rule/0/match/0', provenance: { timeouts: 'TrafficPolicy/app/on-gateway' } },
          ]),
        }),
      ],
    });
  const designed =
    'its timeouts on HTTPRoute app/web is overridden by TrafficPolicy/app/on-route, which attaches more specifically (route rule > route > listener > gateway): the designed precedence, not a conflict';

  it('a route policy overriding the Gateway policy: both entry points agree, healthy, no problem', () => {
    const fromRoute = explain(w(), { kind: 'HTTPRoute', namespace: 'app', name: 'web' });
    const fromPolicy = explain(w(), { kind: 'TrafficPolicy', namespace: 'app', name: 'on-gateway' });
    for (const r of [fromRoute, fromPolicy]) {
      expect(problems(r)).toEqual([]);
      expect(r.healthy).toBe(true);
      expect(r.findings).toContainEqual({ level: 'note', subject: 'TrafficPolicy app/on-gateway', message: designed });
    }
    // The decision they render is the control plane's, the same from both sides.
    const decisionOf = (r: Report) => r.policies.find((p) => p.policy === 'app/on-gateway')!.decision;
    expect(decisionOf(fromRoute)).toEqual([
      {
        field: 'timeouts',
        wonOn: [],
        lostTo: [{ winner: 'TrafficPolicy/app/on-route', rule: 'more specific', level: 'route', routes: ['app/web'] }],
      },
    ]);
    expect(decisionOf(fromPolicy)![0]).toMatchObject({
      wonOn: ['app/other'],
      lostTo: decisionOf(fromRoute)![0].lostTo,
    });
    expect(fromRoute.policies.find((p) => p.policy === 'app/on-gateway')!.via).toEqual(['targetRef Gateway app/gw']);
    expect(explain(w(), { kind: 'TrafficPolicy', namespace: 'app', name: 'on-route' }).healthy).toBe(true);
    const text = renderReport(fromRoute);
    expect(text).toMatch(/^HTTPRoute app\/web: healthy\n/);
    expect(text).toContain('    rules    timeouts: loses to TrafficPolicy/app/on-route (more specific) on app/web\n');
    expect(text).toContain('    rules    timeouts: wins on app/web\n');
  });

  it('a Gateway policy applied to another route is not a status/config disagreement', () => {
    const fromRoute = explain(w(), { kind: 'HTTPRoute', namespace: 'app', name: 'web' });
    expect(fromRoute.findings.filter((f) => f.disagreement)).toEqual([]);
    const fromGateway = explain(w(), { kind: 'Gateway', namespace: 'app', name: 'gw' });
    expect(fromGateway.findings.filter((f) => f.disagreement)).toEqual([]);
    expect(fromGateway.healthy).toBe(true);
  });

  it('config that contradicts the decision is still a disagreement (the Gateway policy held where the route policy wins)', () => {
    const stale = world({
      policies: [onGateway, onRoute],
      pods: [
        pod('gw-1', {
          dump: dump([
            { name: 'httproute/app/web/rule/0/match/0', provenance: { timeouts: 'TrafficPolicy/app/on-gateway' } },
          ]),
        }),
      ],
    });
    const r = explain(stale, { kind: 'HTTPRoute', namespace: 'app', name: 'web' });
    expect(problems(r).map((f) => [f.subject, f.disagreement, f.message])).toEqual([
      [
        'TrafficPolicy app/on-gateway',
        true,
        "its timeouts is in config_dump, but the control plane's rules give it to TrafficPolicy/app/on-route (more specific)",
      ],
      [
        'TrafficPolicy app/on-route',
        true,
        "the control plane's rules give it timeouts, but config_dump of its targets (1 route(s) checked) does not have it",
      ],
    ]);
  });
});

// Issue 13 point 5: a route policy with mergeType merging onto the Gateway's policy, field by field. explain renders
// the control plane's decision (attach-policies.ts: rule `merged`, the merge in provenance `A+B`) and counts the
// Gateway policy's merged value as applied, not as lost or as a disagreement.
describe('explain renders merges (mergeType)', () => {
  const GW_TARGET = [{ group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'gw' }];
  const attached = (reason: string) => ({
    conditions: [ok('Accepted', 'Valid'), ok('Attached', reason)],
    ancestors: [{ ancestorRef: { name: 'gw' }, conditions: [ok('Accepted', 'Valid'), ok('Attached', reason)] }],
  });
  const onGateway = policy(
    'on-gateway',
    { targetRefs: GW_TARGET, timeouts: { request: '5s', streamIdle: '60s' } },
    '2026-01-01T00:00:00Z',
    attached('Merged'),
  );
  const onRoute = policy(
    'on-route',
    { targetRefs: targetWeb, mergeType: 'StrategicMerge', timeouts: { request: '9s' } },
    '2026-01-02T00:00:00Z',
    attached('Merged'),
  );
  const merged = 'TrafficPolicy/app/on-route+TrafficPolicy/app/on-gateway';
  const w = () =>
    world({
      policies: [onGateway, onRoute],
      routes: [route('web'), route('other')],
      pods: [
        pod('gw-1', {
          dump: dump([
            { name: 'httproute/app/web/rule/0/match/0', provenance: { timeouts: merged } },
            { name: 'httproute/app/other/rule/0/match/0', provenance: { timeouts: 'TrafficPolicy/app/on-gateway' } },
          ]),
        }),
      ],
    });

  it('the merged Gateway policy is applied, its field merged under the route policy, and the text says by which merge', () => {
    const r = explain(w(), { kind: 'HTTPRoute', namespace: 'app', name: 'web' });
    expect(problems(r)).toEqual([]);
    expect(r.healthy).toBe(true);
    const gw = r.policies.find((p) => p.policy === 'app/on-gateway')!;
    expect(gw).toMatchObject({ verdict: 'applied', applied: ['timeouts'] });
    expect(gw.decision).toEqual([
      {
        field: 'timeouts',
        wonOn: [],
        lostTo: [
          {
            winner: 'TrafficPolicy/app/on-route',
            rule: 'merged',
            level: 'route',
            routes: ['app/web'],
            mergeType: 'StrategicMerge',
          },
        ],
      },
    ]);
    const rt = r.policies.find((p) => p.policy === 'app/on-route')!;
    expect(rt.decision).toEqual([
      { field: 'timeouts', wonOn: ['app/web'], lostTo: [], merges: [{ policies: merged, routes: ['app/web'] }] },
    ]);
    const text = renderReport(r);
    expect(text).toContain(
      '    rules    timeouts: merged under TrafficPolicy/app/on-route (StrategicMerge) on app/web\n',
    );
    expect(text).toContain(`    rules    timeouts: wins on app/web; merged as ${merged} on app/web\n`);
    const fromPolicy = explain(w(), { kind: 'TrafficPolicy', namespace: 'app', name: 'on-gateway' });
    expect(problems(fromPolicy)).toEqual([]);
    expect(fromPolicy.policies[0]!.decision![0]).toMatchObject({ wonOn: ['app/other'] });
  });
});

describe('explain analysis: GRPCRoute (issue 12)', () => {
  const grpcRoute = (conditions: any[], backends?: any[]): KObj => ({
    ...route('rpc', { conditions, backends }),
    kind: 'GRPCRoute',
  });
  const target = { kind: 'GRPCRoute' as const, namespace: 'app', name: 'rpc' };
  const withProxy = (r: KObj, entries: string[]) =>
    world({ grpcRoutes: [r], pods: [pod('gw-1', { dump: dump(entries.map((name) => ({ name }))) })] });

  it('a healthy GRPCRoute: accepted, resolved, its grpcroute/ entries in the proxy config', () => {
    const r = explain(
      withProxy(grpcRoute([ok('Accepted'), ok('ResolvedRefs')]), ['grpcroute/app/rpc/rule/0/match/0']),
      target,
    );
    expect(problems(r)).toEqual([]);
    expect(r.findings.map((f) => [f.subject, f.message])).toEqual(
      expect.arrayContaining([
        ['GRPCRoute app/rpc', 'accepted by Gateway app/gw'],
        ['GRPCRoute app/rpc', 'backends resolved'],
        ['GRPCRoute app/rpc', 'in the proxy config of Gateway app/gw: 1 route(s) in config_dump of gw-1'],
      ]),
    );
    expect(gatewaysNeeded(withProxy(grpcRoute([]), []), target)).toEqual([{ namespace: 'app', name: 'gw' }]);
    // An HTTPRoute of the same name in config_dump is not this route's.
    const other = explain(withProxy(grpcRoute([ok('Accepted')]), ['httproute/app/rpc/rule/0/match/0']), target);
    expect(problems(other).map((f) => f.disagreement)).toEqual([true]);
  });

  it('a cross-namespace backend without a grant: UNAVAILABLE, and the ReferenceGrant from GRPCRoute', () => {
    const r = grpcRoute(
      [ok('Accepted'), bad('ResolvedRefs', 'RefNotPermitted', 'no grant')],
      [{ name: 'svc', namespace: 'other', port: 8080 }],
    );
    const f = problems(explain(withProxy(r, ['grpcroute/app/rpc/rule/0/match/0']), target));
    expect(f[0].details).toEqual(['an RPC matching such a rule gets gRPC status UNAVAILABLE (14) from the proxy']);
    expect(parse(f[0].yaml!).spec.from).toEqual([
      { group: 'gateway.networking.k8s.io', kind: 'GRPCRoute', namespace: 'app' },
    ]);
  });

  it('parses grpcroute targets; an unknown one says which exist', () => {
    expect(parseTarget('grpcroutes/rpc', 'ns')).toEqual({ kind: 'GRPCRoute', namespace: 'ns', name: 'rpc' });
    const r = explain(world({ grpcRoutes: [grpcRoute([])] }), { ...target, name: 'nope' });
    expect(r.found).toBe(false);
    expect(r.findings[0].details).toEqual(['GRPCRoutes in app: rpc']);
  });
});
