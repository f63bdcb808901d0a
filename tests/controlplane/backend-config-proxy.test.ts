// What the control plane makes of BackendConfigPolicies (golden case system/controlplane/testdata/backend-config-policy)
// is what the proxy takes: every cluster passes the protos' validate rules and compiles into the settings the policy
// asked for (health check, outlier detection, ring hash, least request, circuit breakers, panic threshold 0), and the
// routes' hash_policy compiles. A translation the proxy would NACK fails here rather than in a scenario.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../system/image.ts';
import { compileRouteConfiguration } from '../../system/proxy/config/route-table.ts';
import { compileCluster } from '../../system/proxy/upstream/cluster-config.ts';
import { validateJson } from '../../system/shared/envoy/validate.ts';

const xds = JSON.parse(
  readFileSync(join(REPO_ROOT, 'system/controlplane/testdata/backend-config-policy/xds.json'), 'utf8'),
)['gwvendor-kube-gateway-api~default~gw'];
const strip = ({ '@type': _t, ...rest }: Record<string, any>) => rest;

describe('BackendConfigPolicy clusters and routes, as the proxy compiles them', () => {
  it('every cluster is valid and compiles to the settings the policies set', () => {
    const specs = Object.fromEntries(
      xds.clusters.map((c: Record<string, any>) => {
        expect(validateJson('envoy.config.cluster.v3.Cluster', strip(c))).toBeUndefined();
        return [c.name, compileCluster(strip(c))];
      }),
    );
    const app = specs.kube_default_app_8000;
    expect(app.connectTimeoutMs).toBe(2000);
    expect(app.lbPolicy).toBe('RING_HASH');
    expect(app.ring.minimumRingSize).toBe(2048);
    expect(app.panicThreshold).toBe(0);
    expect(app.healthCheck).toMatchObject({
      path: '/healthz',
      host: 'app.internal',
      intervalMs: 5000,
      timeoutMs: 1000,
      unhealthyThreshold: 3,
      healthyThreshold: 2,
      expected: [
        [200, 201],
        [204, 205],
      ],
    });
    expect(app.outlier).toMatchObject({
      consecutive5xx: 3,
      intervalMs: 10_000,
      baseEjectionMs: 30_000,
      maxEjectionPercent: 50,
    });
    expect(app.thresholds).toMatchObject({
      maxConnections: 100,
      maxPendingRequests: 10,
      maxRequests: 200,
      maxRetries: 2,
    });
    expect(app.bufferLimitBytes).toBe(32768);
    const admin = specs.kube_default_app_9000;
    expect([admin.lbPolicy, admin.choiceCount, admin.connectTimeoutMs]).toEqual(['LEAST_REQUEST', 3, 500]);
    expect(specs.kube_default_grpc_3001.http2Options.maxConcurrentStreams).toBe(50);
  });

  it("the routes' hash_policy compiles (header, then the source IP as terminal)", () => {
    const rc = strip(xds.routes[0]);
    expect(validateJson('envoy.config.route.v3.RouteConfiguration', rc)).toBeUndefined();
    const table = compileRouteConfiguration(rc, { validateClustersDefault: false });
    const actions = table.virtualHosts.flatMap((v: any) => v.routes.map((r: any) => r.action));
    const hashed = actions.find((a: any) => a.cluster === 'kube_default_app_8000');
    expect(hashed.hashPolicy).toEqual([
      { kind: 'header', name: 'x-user', terminal: false },
      { kind: 'source_ip', terminal: true },
    ]);
  });
});
