// explain of a BackendConfigPolicy (backend-config.ts): the control plane's status read as it is, the clusters of the
// ancestor Gateways' proxies that name the policy in their provenance, and their hosts' health flags from /clusters
// with the cause and what a request then gets (Envoy's /clusters health flags, response flag UH).
import { describe, expect, it } from 'vitest';
import type { KObj } from '../../toolkit/kube.ts';
import { explain, gatewaysNeeded } from './analyze.ts';
import { parseTarget } from './explain.ts';
import type { ProxyPodView, World } from './world.ts';

const ANCESTOR = { group: 'gateway.networking.k8s.io', kind: 'Gateway', namespace: 'app', name: 'gw' };
const cond = (type: string, status: string, reason: string, message: string) => ({ type, status, reason, message });

function bcp(conditions: any[]): KObj {
  return {
    apiVersion: 'gateway.gwvendor.dev/v1alpha1',
    kind: 'BackendConfigPolicy',
    metadata: { name: 'hc', namespace: 'app' },
    spec: { targetRefs: [{ group: '', kind: 'Service', name: 'web' }] },
    status: { ancestors: [{ ancestorRef: ANCESTOR, controllerName: 'gateway.gwvendor.dev/gwvendor', conditions }] },
  };
}

function proxy(clusters: string): ProxyPodView {
  return {
    pod: 'gw-1',
    ready: true,
    summary: {} as ProxyPodView['summary'],
    dump: {
      configs: [
        {
          '@type': 'type.googleapis.com/envoy.admin.v3.ClustersConfigDump',
          dynamic_active_clusters: [
            {
              cluster: {
                name: 'kube_app_web_8000',
                metadata: {
                  filter_metadata: {
                    'merge.BackendConfigPolicy.gateway.gwvendor.dev': { healthCheck: 'BackendConfigPolicy/app/hc' },
                  },
                },
              },
            },
          ],
        },
      ],
    },
    clusters,
  };
}

function world(p: KObj, clusters: string): World {
  return {
    gatewayClasses: [],
    gateways: [],
    routes: [],
    policies: [],
    extensions: [],
    backendConfigPolicies: [p],
    grants: [],
    services: {},
    proxies: { 'app/gw': { gateway: { namespace: 'app', name: 'gw' }, pods: [proxy(clusters)] } },
  };
}

const accepted = [
  cond('Accepted', 'True', 'Accepted', 'policy accepted'),
  cond('Attached', 'True', 'Attached', 'applied to kube_app_web_8000'),
];

describe('explain backendconfigpolicy/<name>', () => {
  it('parses the kind as kubectl spells it and reads the ancestor Gateways from the status', () => {
    expect(parseTarget('bcp/hc', 'app')).toEqual({ kind: 'BackendConfigPolicy', namespace: 'app', name: 'hc' });
    expect(parseTarget('backendconfigpolicy/hc', 'app').kind).toBe('BackendConfigPolicy');
    const t = parseTarget('bcp/hc', 'app');
    expect(gatewaysNeeded(world(bcp(accepted), ''), t)).toEqual([{ namespace: 'app', name: 'gw' }]);
  });

  it('names the cause of unhealthy hosts (a health check path that fails) and the 503 UH when none is healthy', () => {
    const text = [
      'kube_app_web_8000::10.0.0.1:8000::health_flags::/failed_active_hc',
      'kube_app_web_8000::10.0.0.2:8000::health_flags::/failed_active_hc',
    ].join('\n');
    const r = explain(world(bcp(accepted), text), parseTarget('bcp/hc', 'app'));
    expect(r.healthy).toBe(false);
    const msgs = r.findings.map((f) => `${f.level} ${f.message}`);
    expect(msgs).toContain('ok proxy gw-1: cluster kube_app_web_8000 carries its healthCheck');
    expect(msgs).toContain(
      'problem proxy gw-1: host 10.0.0.1:8000 of cluster kube_app_web_8000 is /failed_active_hc: its active health check did not get an expected status (healthCheck.http.path / expectedStatuses)',
    );
    expect(msgs.some((m) => /no healthy host in cluster kube_app_web_8000: .*503 .*UH/.test(m))).toBe(true);
  });

  it('an ejected host: outlier detection named; the other host healthy, so no 503', () => {
    const text = [
      'kube_app_web_8000::10.0.0.1:8000::health_flags::/failed_outlier_check',
      'kube_app_web_8000::10.0.0.2:8000::health_flags::healthy',
    ].join('\n');
    const r = explain(world(bcp(accepted), text), parseTarget('bcp/hc', 'app'));
    const msgs = r.findings.map((f) => f.message);
    expect(msgs.some((m) => /10\.0\.0\.1:8000 .* \/failed_outlier_check: outlier detection ejected it/.test(m))).toBe(
      true,
    );
    expect(msgs.some((m) => /no healthy host/.test(m))).toBe(false);
  });

  it('an invalid or overridden policy: the status condition, as the control plane wrote it', () => {
    const invalid = bcp([
      cond('Accepted', 'False', 'Invalid', 'spec.healthCheck.interval: "0s" must be a duration over 0'),
      cond('Attached', 'False', 'Invalid', 'not applied'),
    ]);
    const r = explain(world(invalid, ''), parseTarget('bcp/hc', 'app'));
    expect(r.findings.map((f) => f.message)).toContain(
      'on Gateway app/gw: Accepted=False Invalid: spec.healthCheck.interval: "0s" must be a duration over 0',
    );
    const missing = explain(world(invalid, ''), parseTarget('bcp/nope', 'app'));
    expect(missing.found).toBe(false);
  });
});
