import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { extract, list } from 'tar';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONTROL_PLANE, controlPlaneSelector, GATEWAY_NAME_LABEL } from '../lab/toolkit/admin.ts';
import { expectHttpEventually } from '../lab/toolkit/http.ts';
import { artifactNamespaces, collectSuiteFailure } from './support/artifacts.ts';
import { gatewayUrl, gatewayWithRoute, sampleBackend } from './support/gateway.ts';
import { uniqueName, useLab } from './support/lab.ts';
import { runTool, type ToolRun } from './support/tools.ts';

const GW_API = 'gateway.networking.k8s.io/v1';
const lab = useLab();
const ns = uniqueName('s12-bundle');
const host = 's12.example.com';
const SECRET_VALUE = `s12-do-not-leak-${process.pid}-Qx7`;
artifactNamespaces(ns);

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => statSync(join(dir, f)).isFile())
    .sort();
}

/** index.md's collector table: name → status and detail. */
function collectorRows(md: string): Map<string, { status: string; detail: string }> {
  const rows = new Map<string, { status: string; detail: string }>();
  for (const m of md.matchAll(/^\| (.+?) \| (ok|failed|skipped) \| \d+ \| \d+ ms \| (.*) \|$/gm)) {
    rows.set(m[1], { status: m[2], detail: m[3] });
  }
  return rows;
}

describe('lab:bundle: one archive with everything a bug report needs', () => {
  const work = mkdtempSync(join(tmpdir(), 'gwlab-s12-'));
  const archive = join(work, 'bundle.tar.gz');
  let run: ToolRun;
  let root: string;
  const entries: string[] = [];
  let proxyPod: string;
  let controlPlanePod: string;

  beforeAll(async () => {
    await lab.kube.apply(`${gatewayWithRoute(ns, host)}---
apiVersion: v1
kind: Secret
metadata: {name: api-key, namespace: ${ns}}
stringData: {key: ${SECRET_VALUE}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: copied, namespace: ${ns}}
data: {note: "the key is ${SECRET_VALUE}"}
`);
    await lab.kube.apply(sampleBackend(ns));
    await lab.kube.waitForCondition(GW_API, 'Gateway', 'gw', ns, 'Programmed', { timeoutMs: 60_000 });
    const url = await gatewayUrl(lab.kube, ns, 'gw', 8080);
    // Traffic, so that the proxy's stats and logs have requests in them.
    for (let i = 0; i < 3; i++) await expectHttpEventually({ url, path: '/headers', host }, { status: 200 });
    proxyPod = (await lab.kube.list('v1', 'Pod', ns, `${GATEWAY_NAME_LABEL}=gw`))[0].metadata!.name!;
    const cp = await lab.kube.list('v1', 'Pod', CONTROL_PLANE.namespace, await controlPlaneSelector(lab.kube));
    controlPlanePod = cp.find((p) => p.status?.phase === 'Running')?.metadata?.name ?? '';

    run = await runTool(lab, 'lab-bundle', ['-o', archive]);
    process.stderr.write(`lab:bundle took ${Math.round(run.ms)} ms:\n${run.stdout}`);
    root = join(work, 'x');
    mkdirSync(root);
    if (existsSync(archive)) {
      await list({ file: archive, onReadEntry: (e) => entries.push(e.path) });
      await extract({ file: archive, cwd: root });
    }
  }, 240_000);

  // biome-ignore lint/correctness/noEmptyPattern: vitest passes the suite second; the first argument must be a pattern.
  afterAll(async ({}, suite) => {
    await collectSuiteFailure(suite);
    if (process.env.KEEP === '1') {
      process.stderr.write(`KEEP=1: the bundle and its extracted copy are in ${work}\n`);
      return;
    }
    rmSync(work, { recursive: true, force: true });
    await lab.k(['delete', 'namespace', ns, '--wait=false']).catch(() => undefined);
  });

  const top = () => join(root, 'bundle');
  const read = (rel: string) => readFileSync(join(top(), rel), 'utf8');

  it('exits 0 and prints the archive path, its size and the collector summary', () => {
    expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
    expect(run.stdout).toContain(`${archive} (`);
    expect(run.stdout).toMatch(/\(\d+(\.\d)? (B|KiB|MiB), /);
    expect(run.stdout).toMatch(/^ {2}ok +controlplane /m);
    expect(run.stdout).toMatch(new RegExp(`^ {2}ok +proxy ${ns}/${proxyPod} `, 'm'));
  });

  it('index.md comes first and lists every collector with status ok', () => {
    expect(entries[0]).toBe('bundle/index.md');
    const rows = collectorRows(read('index.md'));
    for (const name of [
      'resources',
      'events',
      'logs',
      'controlplane',
      'cluster',
      'namespaces',
      `proxy ${ns}/${proxyPod}`,
    ]) {
      expect(rows.get(name)?.status, `${name}: ${rows.get(name)?.detail}`).toBe('ok');
    }
    // Other scenarios' namespaces may be on their way out: a proxy pod being deleted cannot be forwarded to, and
    // that is recorded as skipped with the reason. Nothing may fail.
    for (const [name, r] of rows) {
      if (name.startsWith('proxy ') && !name.startsWith(`proxy ${ns}/`)) {
        expect(['ok', 'skipped'], `${name}: ${r.detail}`).toContain(r.status);
        if (r.status === 'skipped') expect(r.detail).toMatch(/not Ready/);
      } else {
        expect(r.status, `${name}: ${r.detail}`).toBe('ok');
      }
    }
    const namespacesRow = rows.get('namespaces')!.detail;
    expect(namespacesRow).toContain(ns);
    expect(namespacesRow).toContain('gwvendor-system');
  });

  it("holds the proxy's config_dump with endpoints, listeners, clusters, stats and server_info", () => {
    const dir = `proxies/${ns}/${proxyPod}`;
    const dump = read(`${dir}/config_dump.json`);
    expect(dump).toContain('EndpointsConfigDump');
    expect(dump).toContain(host);
    const listeners = JSON.parse(read(`${dir}/listeners.json`));
    expect(listeners.listener_statuses.length).toBeGreaterThan(0);
    expect(read(`${dir}/clusters.txt`)).toMatch(/::\d+\.\d+\.\d+\.\d+:\d+::health_flags::/);
    const stats = read(`${dir}/stats_prometheus.txt`);
    expect(stats).toMatch(/^# TYPE envoy_/m);
    expect(stats).toMatch(/^envoy_http_downstream_rq_total\{.*\} [1-9]/m);
    expect(JSON.parse(read(`${dir}/server_info.json`)).state).toBe('LIVE');
  });

  it('holds both control plane snapshots and its metrics', () => {
    expect(read('controlplane/snapshots_krt.json')).toContain(ns);
    expect(read('controlplane/snapshots_xds.json')).toContain(`gwvendor-kube-gateway-api~${ns}~gw`);
    expect(read('controlplane/metrics.txt')).toMatch(/^# TYPE /m);
  });

  it('holds the control plane, proxy and backend logs', () => {
    const logs = filesUnder(top()).filter((f) => f.startsWith('logs/'));
    for (const [what, prefix] of [
      ['control plane', `logs/${CONTROL_PLANE.namespace}/${controlPlanePod}/`],
      ['proxy', `logs/${ns}/${proxyPod}/`],
      ['sample backend', `logs/${ns}/sampleapp-`],
    ]) {
      const files = logs.filter((f) => f.startsWith(prefix));
      expect(files.length, `${what} log under ${prefix}: ${logs.join(', ')}`).toBeGreaterThan(0);
      expect(
        files.some((f) => read(f).length > 0),
        `${what} log is not empty`,
      ).toBe(true);
    }
  });

  it('holds the resources with their statuses, the events and the cluster information', () => {
    const route = read(`resources/${ns}/HTTPRoute.yaml`);
    expect(route).toMatch(/parents:/);
    expect(route).toMatch(/type: Accepted/);
    expect(read(`resources/${ns}/Gateway.yaml`)).toMatch(/type: Programmed/);
    expect(read('resources/_cluster/GatewayClass.yaml')).toMatch(/name: gwvendor/);
    expect(read(`resources/${ns}/Pod.yaml`)).toContain(proxyPod);
    expect(read(`events/${ns}.txt`)).toContain(`Successfully assigned ${ns}/`);
    expect(JSON.parse(read('cluster/version.json')).gitVersion).toMatch(/^v1\./);
    expect(read('cluster/crds.yaml')).toContain('name: gateways.gateway.networking.k8s.io');
    expect(read('cluster/nodes.yaml')).toMatch(/ready: "True"/);
  });

  it('holds no Secret value anywhere: the Secret is metadata only and its copy in a ConfigMap is redacted', () => {
    const b64 = Buffer.from(SECRET_VALUE).toString('base64');
    const leaks = filesUnder(top()).filter((f) => {
      const t = read(f);
      return t.includes(SECRET_VALUE) || t.includes(b64);
    });
    expect(leaks).toEqual([]);
    expect(read(`resources/${ns}/Secret.yaml`)).toMatch(/key: <redacted>/);
    expect(read(`resources/${ns}/ConfigMap.yaml`)).toContain('the key is <redacted>');
  });
});
