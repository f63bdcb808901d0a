import { describe, expect, it } from 'vitest';
import type { KObj } from '../toolkit/kube.ts';
import { conditionsTable, proxiesTable } from './status-render.ts';
import {
  conditionHealth,
  conditionRows,
  describeRow,
  gatewayExtensionRows,
  gatewayOfRole,
  gatewayRows,
  httpRouteRows,
  listenerSetRows,
  policyRows,
  proxyRows,
  routeRows,
  trafficPolicyRows,
} from './status-rows.ts';

const cond = (type: string, status: string, reason: string, observedGeneration = 1, message = `${type} ${reason}`) => ({
  type,
  status,
  reason,
  message,
  observedGeneration,
  lastTransitionTime: '2025-01-01T00:00:00Z',
});

const gatewayClass: KObj = {
  apiVersion: 'gateway.networking.k8s.io/v1',
  kind: 'GatewayClass',
  metadata: { name: 'gwvendor', generation: 1 },
  spec: { controllerName: 'gateway.gwvendor.dev/gwvendor' },
  status: { conditions: [cond('Accepted', 'True', 'Accepted')] },
};

const gateway: KObj = {
  apiVersion: 'gateway.networking.k8s.io/v1',
  kind: 'Gateway',
  metadata: { name: 'gw', namespace: 'team', generation: 2 },
  spec: { gatewayClassName: 'gwvendor', listeners: [{ name: 'http', port: 8080, protocol: 'HTTP' }] },
  status: {
    conditions: [cond('Accepted', 'True', 'Accepted', 2), cond('Programmed', 'True', 'Programmed', 2)],
    listeners: [
      {
        name: 'http',
        conditions: [
          cond('Accepted', 'True', 'Accepted', 2),
          cond('Programmed', 'True', 'Programmed', 2),
          cond('ResolvedRefs', 'True', 'ResolvedRefs', 2),
          cond('Conflicted', 'False', 'NoConflicts', 2),
        ],
      },
    ],
  },
};

const brokenRoute: KObj = {
  apiVersion: 'gateway.networking.k8s.io/v1',
  kind: 'HTTPRoute',
  metadata: { name: 'broken', namespace: 'apps', generation: 3 },
  spec: { parentRefs: [{ name: 'gw', namespace: 'team' }] },
  status: {
    parents: [
      {
        parentRef: { name: 'gw', namespace: 'team', sectionName: 'http' },
        controllerName: 'gateway.gwvendor.dev/gwvendor',
        conditions: [
          cond('Accepted', 'True', 'Accepted', 3),
          cond('ResolvedRefs', 'False', 'BackendNotFound', 3, 'Service apps/nope not found'),
        ],
      },
    ],
  },
};

const policy: KObj = {
  apiVersion: 'gateway.gwvendor.dev/v1alpha1',
  kind: 'TrafficPolicy',
  metadata: { name: 'p', namespace: 'team', generation: 2 },
  spec: {
    targetRefs: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: 'web' }],
    targetSelectors: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', matchLabels: { app: 'web' } }],
  },
  status: {
    conditions: [cond('Accepted', 'True', 'Accepted', 1), cond('Attached', 'True', 'Attached', 1)],
    ancestors: [
      {
        ancestorRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace: 'team', name: 'gw' },
        controllerName: 'gateway.gwvendor.dev/gwvendor',
        conditions: [cond('Accepted', 'True', 'Accepted', 1), cond('Attached', 'False', 'Overridden', 1)],
      },
    ],
  },
};

describe('conditionHealth', () => {
  it('makes a False Accepted, Programmed or ResolvedRefs a problem, other bad states warnings', () => {
    expect(conditionHealth({ type: 'ResolvedRefs', status: 'False' }, false)).toBe('problem');
    expect(conditionHealth({ type: 'Programmed', status: 'False' }, false)).toBe('problem');
    expect(conditionHealth({ type: 'Accepted', status: 'True' }, false)).toBe('ok');
    expect(conditionHealth({ type: 'Accepted', status: 'Unknown' }, false)).toBe('warning');
    expect(conditionHealth({ type: 'Attached', status: 'False' }, false)).toBe('warning');
    expect(conditionHealth({ type: 'Conflicted', status: 'False' }, false)).toBe('ok');
    expect(conditionHealth({ type: 'PartiallyInvalid', status: 'True' }, false)).toBe('warning');
    expect(conditionHealth({ type: 'Accepted', status: 'True' }, true)).toBe('warning');
  });
});

describe('condition rows', () => {
  it('route: one row per parent condition, PARENT = the Gateway (with its section), generation carried', () => {
    const rows = httpRouteRows(brokenRoute);
    expect(rows.map((r) => [r.namespace, r.name, r.target, r.type, r.status, r.reason, r.health])).toEqual([
      ['apps', 'broken', 'gateway/team/gw:http', 'Accepted', 'True', 'Accepted', 'ok'],
      ['apps', 'broken', 'gateway/team/gw:http', 'ResolvedRefs', 'False', 'BackendNotFound', 'problem'],
    ]);
    expect(rows[1]).toMatchObject({ observedGeneration: 3, generation: 3, stale: false });
    expect(rows[1].message).toBe('Service apps/nope not found');
  });

  it('route with no status: one NoStatus warning naming the parentRefs as written (namespace defaulted)', () => {
    const r: KObj = { ...brokenRoute, spec: { parentRefs: [{ name: 'elsewhere' }] }, status: {} };
    expect(httpRouteRows(r)).toEqual([
      expect.objectContaining({ target: 'gateway/apps/elsewhere', reason: 'NoStatus', health: 'warning' }),
    ]);
  });

  it('TCPRoute, UDPRoute: the same parent rows under their own kind; a ListenerSet: its conditions, PARENT its Gateway', () => {
    const tcp = { ...brokenRoute, kind: 'TCPRoute' };
    expect(routeRows(tcp, 'TCPRoute').map((r) => [r.kind, r.target, r.type, r.health])).toEqual([
      ['TCPRoute', 'gateway/team/gw:http', 'Accepted', 'ok'],
      ['TCPRoute', 'gateway/team/gw:http', 'ResolvedRefs', 'problem'],
    ]);
    const ls: KObj = {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'ListenerSet',
      metadata: { name: 'extra', namespace: 'team', generation: 1 },
      spec: { parentRef: { name: 'gw' }, listeners: [{ name: 'http', port: 8081, protocol: 'HTTP' }] },
      status: {
        conditions: [cond('Accepted', 'False', 'NotAllowed'), cond('Programmed', 'False', 'NotAllowed')],
        listeners: [{ name: 'http', conditions: [cond('Conflicted', 'True', 'HostnameConflict')] }],
      },
    };
    expect(listenerSetRows(ls).map((r) => [r.kind, r.target, r.type, r.reason, r.health])).toEqual([
      ['ListenerSet', 'gateway/team/gw', 'Accepted', 'NotAllowed', 'problem'],
      ['ListenerSet', 'gateway/team/gw', 'Programmed', 'NotAllowed', 'problem'],
      ['ListenerSet', 'listener/http', 'Conflicted', 'HostnameConflict', 'warning'],
    ]);
    // The CRD's default status (Unknown/Pending): no controller looked at it.
    const pending = { ...ls, status: { conditions: [cond('Accepted', 'Unknown', 'Pending')] } };
    expect(listenerSetRows(pending)).toEqual([
      expect.objectContaining({ reason: 'NoStatus', target: 'gateway/team/gw', health: 'warning' }),
    ]);
  });

  // Issue 17 point 5: each condition once. The top-level conditions sum up the ancestors' (the control plane writes
  // both), so with ancestors only the per-Gateway rows show; without, the top-level ones, TARGET its targets as written.
  it('policy: one row per condition, per ancestor Gateway; the top-level ones only where no ancestor has the type', () => {
    const rows = trafficPolicyRows(policy);
    expect(rows.map((r) => [r.target, r.type, r.status, r.reason, r.stale, r.health])).toEqual([
      ['gateway/team/gw', 'Accepted', 'True', 'Accepted', true, 'warning'],
      ['gateway/team/gw', 'Attached', 'False', 'Overridden', true, 'warning'],
    ]);
    const twoGateways = structuredClone(policy);
    twoGateways.status.ancestors.push({
      ancestorRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace: 'team', name: 'gw2' },
      controllerName: 'gateway.gwvendor.dev/gwvendor',
      conditions: [cond('Accepted', 'True', 'Accepted', 2), cond('Attached', 'True', 'Attached', 2)],
    });
    twoGateways.status.conditions.push(cond('ResolvedRefs', 'True', 'ResolvedRefs', 2));
    expect(trafficPolicyRows(twoGateways).map((r) => `${r.target} ${r.type}`)).toEqual([
      'httproute/web, httproute{app=web} ResolvedRefs',
      'gateway/team/gw Accepted',
      'gateway/team/gw Attached',
      'gateway/team/gw2 Accepted',
      'gateway/team/gw2 Attached',
    ]);
    const nothing = structuredClone(policy);
    nothing.status = {
      conditions: [cond('Accepted', 'True', 'Valid', 2), cond('Attached', 'False', 'TargetNotFound', 2)],
      ancestors: [],
    };
    expect(trafficPolicyRows(nothing).map((r) => [r.target, r.type, r.reason])).toEqual([
      ['httproute/web, httproute{app=web}', 'Accepted', 'Valid'],
      ['httproute/web, httproute{app=web}', 'Attached', 'TargetNotFound'],
    ]);
  });

  it('BackendConfigPolicy: the same rows under its own kind, TARGET its Services; an Invalid one is a problem', () => {
    const bcp: KObj = {
      apiVersion: 'gateway.gwvendor.dev/v1alpha1',
      kind: 'BackendConfigPolicy',
      metadata: { namespace: 'team', name: 'hc', generation: 1 },
      spec: { targetRefs: [{ group: '', kind: 'Service', name: 'app', sectionName: 'http' }] },
      status: {
        ancestors: [
          {
            ancestorRef: { group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace: 'team', name: 'gw' },
            controllerName: 'gateway.gwvendor.dev/gwvendor',
            conditions: [cond('Accepted', 'False', 'Invalid'), cond('Attached', 'False', 'Invalid')],
          },
        ],
        conditions: [cond('Accepted', 'False', 'Invalid'), cond('Attached', 'False', 'Invalid')],
      },
    };
    const rows = conditionRows({
      gatewayClasses: [],
      gateways: [],
      httpRoutes: [],
      trafficPolicies: [],
      gatewayExtensions: [],
      backendConfigPolicies: [bcp],
    });
    expect(rows.map((r) => [r.kind, r.target, r.type, r.reason, r.health])).toEqual([
      ['BackendConfigPolicy', 'gateway/team/gw', 'Accepted', 'Invalid', 'problem'],
      ['BackendConfigPolicy', 'gateway/team/gw', 'Attached', 'Invalid', 'warning'],
    ]);
    const none = { ...bcp, status: undefined };
    expect(policyRows(none, 'BackendConfigPolicy').map((r) => [r.kind, r.target, r.reason])).toEqual([
      ['BackendConfigPolicy', 'service/app:http', 'NoStatus'],
    ]);
  });

  it('gateway: listener rows only when one is not ok, or with verbose', () => {
    expect(gatewayRows(gateway).map((r) => `${r.target} ${r.type}`)).toEqual([
      'gatewayclass/gwvendor Accepted',
      'gatewayclass/gwvendor Programmed',
    ]);
    expect(gatewayRows(gateway, { verbose: true })).toHaveLength(6);
    const conflicted = structuredClone(gateway);
    conflicted.status.listeners[0].conditions[3] = cond('Conflicted', 'True', 'HostnameConflict', 2);
    expect(gatewayRows(conflicted).map((r) => `${r.target} ${r.type} ${r.health}`)).toEqual([
      'gatewayclass/gwvendor Accepted ok',
      'gatewayclass/gwvendor Programmed ok',
      'listener/http Conflicted warning',
    ]);
  });

  it('flags a listener whose certificate is not resolved as a problem, with the explain command that prints the fix', () => {
    const https = structuredClone(gateway);
    const msg = 'listener https: tls.certificateRefs[0]: Gateway in namespace team may not refer to Secret certs/site';
    https.status.listeners[0] = {
      name: 'https',
      conditions: [
        cond('Accepted', 'True', 'Accepted', 2),
        cond('ResolvedRefs', 'False', 'RefNotPermitted', 2, msg),
        cond('Programmed', 'False', 'Invalid', 2, 'listener is invalid'),
      ],
    };
    const rows = gatewayRows(https).filter((r) => r.target === 'listener/https');
    expect(rows.map((r) => `${r.type} ${r.health}`)).toEqual(['ResolvedRefs problem', 'Programmed problem']);
    expect(describeRow(rows[0]!)).toBe(
      `certificate not resolved: Gateway team/gw [listener/https] ResolvedRefs=False RefNotPermitted: ${msg} (npm run explain -- gateway/gw/https -n team)`,
    );
    // Other reasons keep the plain line.
    expect(describeRow(rows[1]!)).toBe(
      'Gateway team/gw [listener/https] Programmed=False Invalid: listener is invalid',
    );
  });

  it('orders kinds classes → Gateways → ListenerSets → routes (HTTP, TCP, UDP, TLS) → policies', () => {
    const ls: KObj = { ...gateway, kind: 'ListenerSet', spec: { parentRef: { name: 'gw' } } };
    const rows = conditionRows({
      gatewayClasses: [gatewayClass],
      gateways: [gateway],
      listenerSets: [ls],
      httpRoutes: [brokenRoute],
      tcpRoutes: [{ ...brokenRoute, kind: 'TCPRoute' }],
      udpRoutes: [{ ...brokenRoute, kind: 'UDPRoute' }],
      tlsRoutes: [{ ...brokenRoute, kind: 'TLSRoute' }],
      trafficPolicies: [policy],
      gatewayExtensions: [],
    });
    expect([...new Set(rows.map((r) => r.kind))]).toEqual([
      'GatewayClass',
      'Gateway',
      'ListenerSet',
      'HTTPRoute',
      'TCPRoute',
      'UDPRoute',
      'TLSRoute',
      'TrafficPolicy',
    ]);
  });

  it('ListenerPolicy rows as a TrafficPolicy: its ancestor conditions, and TARGET its listener when unattached', () => {
    const lp: KObj = {
      kind: 'ListenerPolicy',
      metadata: { name: 'json-5xx', namespace: 'team', generation: 1 },
      spec: { targetRefs: [{ group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'gw', sectionName: 'nope' }] },
      status: {
        conditions: [
          { type: 'Accepted', status: 'True', reason: 'Valid', message: 'ok', observedGeneration: 1 },
          {
            type: 'Attached',
            status: 'False',
            reason: 'TargetNotFound',
            message: 'no listener',
            observedGeneration: 1,
          },
        ],
      },
    };
    const rows = conditionRows({
      gatewayClasses: [],
      gateways: [],
      httpRoutes: [],
      trafficPolicies: [policy],
      listenerPolicies: [lp],
      gatewayExtensions: [],
    });
    const mine = rows.filter((r) => r.kind === 'ListenerPolicy');
    expect(mine.map((r) => [r.name, r.target, r.type, r.status, r.reason])).toEqual([
      ['json-5xx', 'gateway/gw:nope', 'Accepted', 'True', 'Valid'],
      ['json-5xx', 'gateway/gw:nope', 'Attached', 'False', 'TargetNotFound'],
    ]);
    expect(rows.at(-1)!.kind).toBe('ListenerPolicy');
  });

  it('orders kinds classes → Gateways → routes → policies and renders the table with GEN and marks', () => {
    const rows = conditionRows({
      gatewayClasses: [gatewayClass],
      gateways: [gateway],
      httpRoutes: [brokenRoute],
      trafficPolicies: [policy],
      gatewayExtensions: [],
    });
    expect([...new Set(rows.map((r) => r.kind))]).toEqual(['GatewayClass', 'Gateway', 'HTTPRoute', 'TrafficPolicy']);
    const lines = conditionsTable(rows).split('\n');
    expect(lines[0].split(/\s{2,}/).filter(Boolean)).toEqual([
      'NAMESPACE',
      'NAME',
      'PARENT/TARGET',
      'TYPE',
      'STATUS',
      'REASON',
      'GEN',
    ]);
    expect(lines.find((l) => l.includes('BackendNotFound'))).toMatch(
      /^✗\s+apps\s+httproute\/broken\s+gateway\/team\/gw:http\s+ResolvedRefs\s+False\s+BackendNotFound\s+3\/3$/,
    );
    expect(lines[1]).toMatch(/^\s+-\s+gatewayclass\/gwvendor\s+gateway\.gwvendor\.dev\/gwvendor\s+Accepted\s+True/);
    expect(lines.find((l) => l.includes('Overridden'))).toMatch(/^!.*1\/2 STALE$/);
    expect(conditionsTable(rows, { verbose: true })).toContain('Service apps/nope not found');
    expect(conditionsTable(rows)).not.toContain('Service apps/nope not found');
  });
});

describe('proxy rows', () => {
  const data = {
    'gwvendor-kube-gateway-api~team~gw': {
      gateway: 'team/gw',
      version: 7,
      proxies: {
        'gw-abc.team': {
          types: {
            clusters: { status: 'ACKED', version_sent: '7', version_acked: '7' },
            routes: {
              status: 'NACKED',
              version_sent: '7',
              version_acked: '6',
              last_nack: { version: '7', detail: 'invalid regex', at: '2025-01-01T00:00:00.000Z' },
            },
            listeners: { status: 'SENT', version_sent: '7', version_acked: '5' },
          },
        },
      },
    },
    'gwvendor-kube-gateway-api~other~gw2': {
      version: 1,
      proxies: { 'gw2-x.other': { types: { clusters: { status: 'ACKED', version_sent: '1', version_acked: '1' } } } },
    },
  };

  it('one row per node and type: NACK a problem, SENT a warning, ACKED ok; scoped by the role namespace', () => {
    const rows = proxyRows(data);
    expect(rows.map((r) => [r.gateway, r.node, r.type, r.sent, r.acked, r.status, r.health])).toEqual([
      ['other/gw2', 'gw2-x.other', 'clusters', '1', '1', 'ACKED', 'ok'],
      ['team/gw', 'gw-abc.team', 'clusters', '7', '7', 'ACKED', 'ok'],
      ['team/gw', 'gw-abc.team', 'routes', '7', '6', 'NACKED', 'problem'],
      ['team/gw', 'gw-abc.team', 'listeners', '7', '5', 'SENT', 'warning'],
    ]);
    expect(proxyRows(data, { namespace: 'other' }).map((r) => r.gateway)).toEqual(['other/gw2']);
    const table = proxiesTable(rows);
    expect(table.split('\n').find((l) => l.includes('NACKED'))).toMatch(
      /^✗.*v7 2025-01-01T00:00:00.000Z: invalid regex$/,
    );
  });

  it('reads the Gateway from the role, and keeps an unknown role as it is', () => {
    expect(gatewayOfRole('gwvendor-kube-gateway-api~ns~gw')).toBe('ns/gw');
    expect(gatewayOfRole('something-else')).toBe('something-else');
  });
});

describe('GatewayExtension rows', () => {
  it('name the Service of an HTTP or a gRPC ext auth service, and a rate limit or ext_proc service', () => {
    const ext = (spec: Record<string, unknown>): KObj =>
      ({
        kind: 'GatewayExtension',
        metadata: { name: 'e', namespace: 'app', generation: 1 },
        spec,
        status: { conditions: [cond('Accepted', 'True', 'Accepted'), cond('ResolvedRefs', 'True', 'ResolvedRefs')] },
      }) as unknown as KObj;
    const target = (spec: Record<string, unknown>) => gatewayExtensionRows(ext(spec))[0]!.target;
    expect(target({ extAuth: { httpService: { backendRef: { name: 'a', port: 9000 } } } })).toBe('service/app/a:9000');
    expect(target({ extAuth: { grpcService: { backendRef: { name: 'a', namespace: 'x', port: 9001 } } } })).toBe(
      'service/x/a:9001',
    );
  });
});
