// explain listenerpolicy/<name> (listener-policies.ts): the verdict from the listeners' provenance in config_dump, the
// cause when it is not applied (invalid, another policy on the port, a Gateway that does not exist), and the Gateway's
// explanation listing its ListenerPolicies.
import { describe, expect, it } from 'vitest';
import type { ConfigDump } from '../../toolkit/admin.ts';
import type { KObj } from '../../toolkit/kube.ts';
import { explain } from './analyze.ts';
import { parseTarget } from './explain.ts';
import { renderReport } from './render.ts';
import type { World } from './world.ts';

const KEY = 'listener.gateway.gwvendor.dev';
const ok = (type: string, reason = type, message = '') => ({ type, status: 'True', reason, message });
const no = (type: string, reason: string, message = '') => ({ type, status: 'False', reason, message });

function lp(name: string, spec: Record<string, unknown>, conditions: unknown[]): KObj {
  return {
    apiVersion: 'gateway.gwvendor.dev/v1alpha1',
    kind: 'ListenerPolicy',
    metadata: { name, namespace: 'app', creationTimestamp: '2026-01-01T00:00:00Z' as unknown as Date },
    spec: { targetRefs: [{ group: 'gateway.networking.k8s.io', kind: 'Gateway', name: 'gw' }], ...spec },
    status: { conditions },
  };
}

function listenerDump(prov: Record<string, Record<string, string>>): ConfigDump {
  return {
    configs: [
      {
        '@type': 'type.googleapis.com/envoy.admin.v3.ListenersConfigDump',
        dynamic_listeners: Object.entries(prov).map(([name, p]) => ({
          name,
          active_state: { listener: { name, metadata: { filter_metadata: { [KEY]: p } } } },
        })),
      },
    ],
  };
}

function world(policies: KObj[], prov: Record<string, Record<string, string>>): World {
  return {
    gatewayClasses: [
      {
        kind: 'GatewayClass',
        metadata: { name: 'gwvendor' },
        spec: { controllerName: 'gateway.gwvendor.dev/gwvendor' },
      },
    ],
    gateways: [
      {
        kind: 'Gateway',
        metadata: { name: 'gw', namespace: 'app' },
        spec: { gatewayClassName: 'gwvendor' },
        status: { conditions: [ok('Accepted'), ok('Programmed')] },
      },
    ],
    routes: [],
    policies: [],
    listenerPolicies: policies,
    extensions: [],
    grants: [],
    services: {},
    proxies: {
      'app/gw': {
        gateway: { namespace: 'app', name: 'gw' },
        pods: [
          {
            pod: 'gw-1',
            ready: true,
            dump: listenerDump(prov),
            summary: {
              namespace: 'app',
              name: 'gw-1',
              phase: 'Running',
              ready: true,
              deleting: false,
              labels: {},
              conditions: [],
              initContainers: [],
              containers: [],
              events: [],
            },
          },
        ],
      },
    },
  };
}

describe('explain ListenerPolicy', () => {
  it('parses listenerpolicy/<name> and lp/<name>', () => {
    expect(parseTarget('lp/json', 'app')).toEqual({ kind: 'ListenerPolicy', namespace: 'app', name: 'json' });
    expect(parseTarget('listenerpolicy/json', 'app').kind).toBe('ListenerPolicy');
  });

  it('applied: config_dump names it on the listener for each setting', () => {
    const p = lp('json', { accessLog: [{}], idleTimeout: '30s' }, [ok('Accepted', 'Valid'), ok('Attached')]);
    const w = world([p], {
      'listener~8080': { accessLog: 'ListenerPolicy/app/json', idleTimeout: 'ListenerPolicy/app/json' },
    });
    const r = explain(w, { kind: 'ListenerPolicy', namespace: 'app', name: 'json' });
    expect(r.healthy).toBe(true);
    expect(r.policies[0]).toMatchObject({
      kind: 'ListenerPolicy',
      verdict: 'applied',
      applied: ['accessLog', 'idleTimeout'],
    });
    expect(r.findings.map((f) => f.message)).toContain(
      'applied on Gateway app/gw listener~8080: accessLog, idleTimeout',
    );
    expect(renderReport(r)).toContain('  ListenerPolicy app/json  (created 2026-01-01T00:00:00Z)');
  });

  it('not applied: another policy holds the port (Overridden), named with the rule', () => {
    const p = lp('newer', { idleTimeout: '5s' }, [
      ok('Accepted', 'Valid'),
      no('Attached', 'Overridden', 'overridden by app/older'),
    ]);
    const w = world([p], { 'listener~8080': { idleTimeout: 'ListenerPolicy/app/older' } });
    const r = explain(w, { kind: 'ListenerPolicy', namespace: 'app', name: 'newer' });
    expect(r.policies[0]!.verdict).toBe('not applied');
    expect(r.findings.map((f) => f.message)).toEqual(
      expect.arrayContaining([
        'on Gateway app/gw listener~8080 the settings come from ListenerPolicy/app/older: one ListenerPolicy per port (one naming a listener beats one naming the Gateway, then the older)',
        'not applied: Attached=False (Overridden): overridden by app/older',
      ]),
    );
    expect(r.healthy).toBe(false);
  });

  it('invalid: the Accepted message is the cause', () => {
    const msg = 'spec.accessLog[0].fileSink.stringFormat: Not supported field in StreamInfo: NOPE';
    const p = lp('bad', { accessLog: [{}] }, [no('Accepted', 'Invalid', msg), no('Attached', 'Invalid', msg)]);
    const r = explain(world([p], { 'listener~8080': {} }), { kind: 'ListenerPolicy', namespace: 'app', name: 'bad' });
    expect(r.findings.filter((f) => f.level === 'problem').map((f) => f.message)).toEqual([
      `not valid, so not applied: ${msg}`,
    ]);
  });

  it('a Gateway that does not exist; a policy that does not exist', () => {
    const p = {
      ...lp('x', { idleTimeout: '1s' }, []),
      spec: { targetRefs: [{ kind: 'Gateway', name: 'nope' }], idleTimeout: '1s' },
    };
    const r = explain(world([p], {}), { kind: 'ListenerPolicy', namespace: 'app', name: 'x' });
    expect(r.findings.map((f) => f.message)).toContain('its targetRefs name Gateway app/nope, which does not exist');
    const missing = explain(world([], {}), { kind: 'ListenerPolicy', namespace: 'app', name: 'y' });
    expect(missing.found).toBe(false);
  });

  it("a Gateway's explanation lists its ListenerPolicies", () => {
    const p = lp('json', { accessLog: [{}] }, [ok('Accepted', 'Valid'), ok('Attached')]);
    const r = explain(world([p], { 'listener~8080': { accessLog: 'ListenerPolicy/app/json' } }), {
      kind: 'Gateway',
      namespace: 'app',
      name: 'gw',
    });
    expect(r.policies.map((x) => [x.kind, x.policy, x.verdict])).toEqual([['ListenerPolicy', 'app/json', 'applied']]);
  });
});
