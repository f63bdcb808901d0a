// Contract 4.6, gateway with proxy debug logging: a GatewayParameters with
// spec.kube.envoyContainer.bootstrap.logLevel=debug, a Gateway of the same name that refers to it (HTTP listener 8080,
// routes from All namespaces), and an HTTPRoute to the sample application. The proxy pod carries the setting
// (`--log-level debug`); traffic answers 200; and the proxy's logs, read since a mark taken before the traffic, hold
// Envoy-format debug lines about connections, pools, clients and stats flushes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openProxyAdmin, setLogLevel } from '../lab/toolkit/admin.ts';
import { describePodsText } from '../lab/toolkit/describe.ts';
import { expectHttpEventually } from '../lab/toolkit/http.ts';
import { type LogMark, markLogs } from '../lab/toolkit/logs.ts';
import { waitFor } from '../lab/toolkit/wait.ts';
import { artifactNamespaces, collectSuiteFailure } from './support/artifacts.ts';
import { gatewayUrl } from './support/gateway.ts';
import { uniqueName, useLab } from './support/lab.ts';

const GW_API = 'gateway.networking.k8s.io/v1';
const GW_NS = 'gwvendor-system';
const APP_NS = 'sampleapp';
const lab = useLab();
const gw = uniqueName('s02-debug');
const host = `${gw}.example.com`;
// Contract 1 and 4.3: gateway pods carry app.orch.io/name=<gateway_name>.
const POD_LABEL = `app.orch.io/name=${gw}`;
artifactNamespaces(GW_NS, APP_NS);

const resources = `
apiVersion: gateway.gwvendor.dev/v1alpha1
kind: GatewayParameters
metadata: {name: ${gw}, namespace: ${GW_NS}}
spec:
  kube:
    envoyContainer:
      bootstrap:
        logLevel: debug
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: ${gw}, namespace: ${GW_NS}}
spec:
  gatewayClassName: gwvendor
  infrastructure:
    parametersRef: {name: ${gw}, group: gateway.gwvendor.dev, kind: GatewayParameters}
  listeners:
  - name: http
    protocol: HTTP
    port: 8080
    allowedRoutes: {namespaces: {from: All}}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: ${gw}, namespace: ${APP_NS}}
spec:
  parentRefs: [{name: ${gw}, namespace: ${GW_NS}}]
  hostnames: [${host}]
  rules: [{backendRefs: [{name: sampleapp, port: 8000}]}]
`;

/**
 * Envoy's default application log format (reference/envoy.md):
 * `[<timestamp>][<thread_id>][<level>][<component>] [<source_location>] [Tags: ...] <message>`.
 */
const ENVOY_LINE =
  /^\[(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3})\]\[(\d+)\]\[(trace|debug|info|warning|error|critical)\]\[([a-z_0-9]+)\] \[([^\]\s]+:\d+)\] (?:\[Tags: ((?:"[A-Za-z]+":"[^"]*",?)+)\] )?(.*)$/;

interface EnvoyLine {
  level: string;
  component: string;
  source: string;
  tags?: string;
  message: string;
}

function parseEnvoyLine(line: string): EnvoyLine | undefined {
  const m = ENVOY_LINE.exec(line);
  return m ? { level: m[3], component: m[4], source: m[5], tags: m[6], message: m[7] } : undefined;
}

describe('gateway with proxy debug logging (contract 4.6)', () => {
  let url: string;
  let mark: LogMark;

  beforeAll(async () => {
    await lab.kube.apply(resources);
    await lab.kube
      .waitForCondition(GW_API, 'Gateway', gw, GW_NS, 'Programmed', { timeoutMs: 60_000 })
      .catch(async (err: Error) => {
        throw new Error(
          `${err.message}\n${await describePodsText(lab.kube, { namespace: GW_NS, labelSelector: POD_LABEL })}`,
        );
      });
    url = await gatewayUrl(lab.kube, GW_NS, gw, 8080);
  });

  // biome-ignore lint/correctness/noEmptyPattern: vitest passes the suite second; the first argument must be a pattern.
  afterAll(async ({}, suite) => {
    await collectSuiteFailure(suite);
    if (process.env.KEEP !== '1') await lab.kube.delete(resources, { wait: true }).catch(() => undefined);
  });

  it('a deployment, a pod and a Service named after the Gateway; the pod carries --log-level debug', async () => {
    expect(await lab.kube.get('apps/v1', 'Deployment', gw, GW_NS)).toBeDefined();
    const svc = await lab.kube.get('v1', 'Service', gw, GW_NS);
    expect(svc?.spec.type).toBe('LoadBalancer');
    const pods = (await lab.kube.list('v1', 'Pod', GW_NS, POD_LABEL)).filter((p) => !p.metadata?.deletionTimestamp);
    expect(pods.length).toBe(1);
    expect(pods[0].metadata?.name).toMatch(new RegExp(`^${gw}-`));
    const c = pods[0].spec.containers[0];
    const argv: string[] = [...(c.command ?? []), ...(c.args ?? [])];
    const i = argv.indexOf('--log-level');
    expect(i, `--log-level in ${argv.join(' ')}`).toBeGreaterThanOrEqual(0);
    expect(argv[i + 1]).toBe('debug');
    // What a user reads with the contract's operation (pods by label, as YAML).
    const yaml = await lab.k(['get', 'pods', '-n', GW_NS, '-l', POD_LABEL, '-o', 'yaml']);
    expect(yaml).toMatch(/- --log-level\n\s+- debug\n/);
  });

  it('traffic through the gateway answers 200', async () => {
    // Mark the proxy's log first: the debug lines asserted below come from this traffic.
    mark = await markLogs(lab.kube, { namespace: GW_NS, labelSelector: POD_LABEL });
    await expectHttpEventually({ url, path: '/headers', host }, { status: 200 });
  });

  it('the proxy logs debug lines about connections, pools, clients and stats flushes', async () => {
    const wanted: Record<string, (l: EnvoyLine) => boolean> = {
      'a new downstream connection': (l) => l.component === 'conn_handler' && /^new connection from /.test(l.message),
      'an upstream connection': (l) => l.component === 'connection' && /^connecting to \S+:\d+$/.test(l.message),
      'a pool creating a connection': (l) => l.component === 'pool' && /creating a new connection/.test(l.message),
      'a client connecting': (l) => l.component === 'client' && /^(connecting|connected)$/.test(l.message),
      'a stats flush': (l) => l.component === 'main' && l.message === 'flushing stats',
    };
    const lines = await mark.waitFor(
      `proxy debug lines about ${Object.keys(wanted).join(', ')}`,
      (ls) => {
        const parsed = ls.map(parseEnvoyLine).filter((x): x is EnvoyLine => !!x && x.level === 'debug');
        return Object.values(wanted).every((f) => parsed.some(f));
      },
      { timeoutMs: 20_000 },
    );
    const debug = lines.map(parseEnvoyLine).filter((x): x is EnvoyLine => !!x && x.level === 'debug');
    for (const [what, f] of Object.entries(wanted)) expect(debug.some(f), what).toBe(true);
    // Connection-scoped lines carry Envoy's tags.
    const conn = debug.find(wanted['a new downstream connection'])!;
    expect(conn.tags).toMatch(/^"ConnectionId":"\d+"$/);
    expect(debug.find(wanted['a client connecting'])!.tags).toMatch(/"ConnectionId":"\d+"/);
    // The router names the cluster it picked for the request.
    expect(
      debug.some(
        (l) => l.component === 'router' && /cluster '.*sampleapp.*' match for URL '\/headers'/.test(l.message),
      ),
    ).toBe(true);
    // Lines from before the mark are not returned: the proxy's start-up lines are not there.
    expect(lines.some((l) => /starting main dispatch loop|initializing epoch/.test(l))).toBe(false);
  });

  it('back to info in the GatewayParameters: the proxy rolls onto --log-level info and its debug lines stop', async () => {
    const before = (await lab.kube.list('v1', 'Pod', GW_NS, POD_LABEL)).map((p) => p.metadata?.uid);
    await lab.kube.apply(resources.replace('logLevel: debug', 'logLevel: info'));
    const pod = await waitFor('a new proxy pod with --log-level info, Ready, the old ones gone', async () => {
      const pods = await lab.kube.list('v1', 'Pod', GW_NS, POD_LABEL);
      const fresh = pods.filter((p) => !before.includes(p.metadata?.uid));
      const args: string[] = fresh[0]?.spec.containers[0].args ?? [];
      const ready = fresh[0]?.status?.conditions?.some((c: any) => c.type === 'Ready' && c.status === 'True');
      return {
        ok: pods.length === 1 && fresh.length === 1 && ready && args[args.indexOf('--log-level') + 1] === 'info',
        value: fresh[0],
        seen: pods.map((p) => `${p.metadata?.name} ${p.status?.phase} ${p.spec.containers[0].args.join(' ')}`),
      };
    });
    const admin = await openProxyAdmin(lab.kube, { namespace: GW_NS, name: gw });
    try {
      expect(admin.pod).toBe(pod.metadata?.name);
      const info = await admin.json('/server_info');
      expect(info.command_line_options.log_level).toBe('info');
      // One logger at debug shows the next request was handled; no other component logs at debug.
      await setLogLevel(admin, { conn_handler: 'debug' });
      const m = await markLogs(lab.kube, { namespace: GW_NS, pod: pod.metadata!.name! });
      await expectHttpEventually({ url, path: '/headers', host }, { status: 200 });
      const after = await m.waitFor('the conn_handler debug line of the request', /\]\[debug\]\[conn_handler\] /);
      const otherDebug = after
        .map(parseEnvoyLine)
        .filter((l) => l?.level === 'debug' && l.component !== 'conn_handler');
      expect(otherDebug).toEqual([]);
    } finally {
      await admin.close();
    }
  });
});
