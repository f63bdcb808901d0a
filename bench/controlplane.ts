// `npm run bench:controlplane`: the control plane's figures from issue 5, with the control plane in its own process
// (as in a pod) and the proxies' ADS clients in this one:
//   - full translation of 1,000 HTTPRoutes × 5 rules over 10 Gateways (resources → IR → xDS JSON), and with the
//     snapshots encoded to Any (what is served);
//   - one-route incremental update → new snapshot (p50, p95);
//   - push to 10 connected proxies: a route edit reaching 10 proxies of one Gateway (RDS), and an endpoint change
//     reaching one proxy on each of the 10 Gateways (EDS);
//   - the control plane's RSS at that scale, serving those proxies: once idle (BENCH_IDLE_S, default 25 s, after the
//     work: V8's memory reducer gives freed heap back 8-16 s after a burst, system/controlplane/memory-reducer.ts) and
//     the peak during the run.
// Writes reports/bench/controlplane.json and controlplane.md. The machine is shared: the load average is recorded
// beside the figures. BENCH_MEM=1 prints the memory of the control plane process at each step. `--vs <checkout>`:
// this full translation against another checkout's, side by side (controlplane/versus.ts).
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import { repoRoot as root } from './shared/paths.ts';
import { progress, reportJson, writeReports } from './shared/reports.ts';
import { percentile as pct, round1 as r1 } from './shared/stats.ts';

const GATEWAYS = 10;
const ROUTES = Number(process.env.BENCH_ROUTES ?? 1000);
const RULES = 5;
const SERVICES = 50;
const EDITS = 100;
const PUSHES = 20;
const IDLE_S = Number(process.env.BENCH_IDLE_S ?? 25);
// rssMb: issue 14 (< 200 MB at this scale; issue 5 had asked for < 300 MB).
const TARGETS = { fullTranslationMs: 1000, incrementalP50Ms: 50, pushMs: 100, rssMb: 200 };
const step = progress('controlplane');

// ---- the control plane process -------------------------------------------------------------------------------

function objects(): any[] {
  const out: any[] = [
    {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'GatewayClass',
      metadata: { name: 'gwvendor' },
      spec: { controllerName: 'gateway.gwvendor.dev/gwvendor' },
    },
  ];
  for (let s = 0; s < SERVICES; s++) {
    out.push({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: `svc-${s}`, namespace: 'apps' },
      spec: { ports: [{ name: 'http', port: 8000 }] },
    });
    out.push({
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: `svc-${s}-1`, namespace: 'apps', labels: { 'kubernetes.io/service-name': `svc-${s}` } },
      addressType: 'IPv4',
      endpoints: [1, 2, 3].map((i) => ({ addresses: [`127.10.${s}.${i}`], conditions: { ready: true } })),
      ports: [{ name: 'http', port: 8080 }],
    });
  }
  for (let g = 0; g < GATEWAYS; g++) {
    out.push({
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'Gateway',
      metadata: { name: `gw-${g}`, namespace: 'infra' },
      spec: {
        gatewayClassName: 'gwvendor',
        listeners: [{ name: 'http', protocol: 'HTTP', port: 8080, allowedRoutes: { namespaces: { from: 'All' } } }],
      },
    });
  }
  for (let r = 0; r < ROUTES; r++) out.push(route(r, 0));
  return out;
}

function route(r: number, edit: number): any {
  const g = r % GATEWAYS;
  const rules = Array.from({ length: RULES }, (_, i) => ({
    matches: [
      {
        path: { type: 'PathPrefix', value: `/r${r}/rule${i}${edit && i === 0 ? `/edit${edit}` : ''}` },
        ...(i === 1 ? { headers: [{ name: 'x-version', value: 'v2' }] } : {}),
      },
    ],
    ...(i === 2
      ? {
          filters: [
            { type: 'RequestHeaderModifier', requestHeaderModifier: { set: [{ name: 'x-route', value: `r${r}` }] } },
          ],
        }
      : {}),
    // The last rule of every route goes to svc-0 (a shared fallback), so an endpoint change there reaches every Gateway.
    backendRefs:
      i === RULES - 1
        ? [{ name: 'svc-0', port: 8000 }]
        : [
            { name: `svc-${(r + i) % SERVICES}`, port: 8000, weight: 90 },
            { name: `svc-${(r + i + 1) % SERVICES}`, port: 8000, weight: 10 },
          ],
    ...(i === 3 ? { timeouts: { request: '10s' } } : {}),
  }));
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'HTTPRoute',
    metadata: {
      name: `route-${r}`,
      namespace: 'apps',
      generation: edit + 1,
      creationTimestamp: '2024-01-01T00:00:00Z',
    },
    spec: {
      parentRefs: [{ name: `gw-${g}`, namespace: 'infra' }],
      hostnames: [`r${r}.example.com`],
      rules,
    },
  };
}

/**
 * Full translation, resources → IR → xDS JSON, on a fresh pipeline each time (its own process: no memory left over).
 * `--translate [checkout] [count]`: that checkout's control plane (--vs: another's), `count` translations (4); the
 * first, with the modules' first run in it, is left out.
 */
async function translateChild(): Promise<void> {
  const [checkout = root, count = '4'] = process.argv.slice(process.argv.indexOf('--translate') + 1);
  const { Pipeline } = await import(join(checkout, 'system', 'controlplane', 'pipeline.ts'));
  const { Runtime } = await import(join(checkout, 'system', 'controlplane', 'krt', 'collection.ts'));
  const objs = objects();
  const translation: number[] = [];
  for (let i = 0; i < Number(count); i++) {
    const rt = new Runtime({ autoFlush: false, start: false });
    const p = new Pipeline({ mode: 'strict', runtime: rt });
    for (const o of objs) p.inputFor(o.kind)!.upsert(o);
    const t0 = performance.now();
    rt.start();
    rt.flush();
    translation.push(performance.now() - t0);
    if (p.snapshots.size() !== GATEWAYS) throw new Error(`expected ${GATEWAYS} snapshots, got ${p.snapshots.size()}`);
  }
  process.stdout.write(JSON.stringify({ type: 'translated', translationMs: translation.slice(1) }) + '\n');
}

async function child(): Promise<void> {
  const { ControlPlane } = await import('../system/controlplane/controlplane.ts');
  const { LogRegistry } = await import('../system/shared/log.ts');
  const send = (o: unknown) => process.stdout.write(JSON.stringify(o) + '\n');
  // No forced GC here: a forced full GC is not a memory-reducing one (the pages it frees stay in V8's pool, resident)
  // and it would move V8's own GC schedule, which is what the idle figure is about.
  const mem = (at: string) => {
    if (!process.env.BENCH_MEM) return;
    const m = process.memoryUsage();
    step(
      `memory ${at}: ${Object.entries(m)
        .map(([k, v]) => `${k} ${r1(v / 1048576)}`)
        .join(', ')} MB`,
    );
  };
  mem('after loading modules');
  const objs = objects();
  const load = (inputFor: (k: string) => any) => {
    for (const o of objs) inputFor(o.kind).upsert(o);
  };

  // The control plane proper (translation + snapshots encoded into the cache), serving xDS.
  const cp = new ControlPlane({
    validation: 'strict',
    logs: new LogRegistry({ level: 'off' }),
    xdsHost: '127.0.0.1',
    xdsPort: 0,
    adminPort: 0,
  });
  load((k) => cp.pipeline.inputFor(k));
  await cp.start();
  const t0 = performance.now();
  cp.startSync();
  const withSnapshots = performance.now() - t0;
  mem('after the first sync');
  const routesPerGateway = cp.pipeline.snapshots
    .list()
    .map((s) => (s.routes[0].virtual_hosts as any[]).reduce((n, v) => n + v.routes.length, 0));
  send({
    type: 'ready',
    xdsPort: cp.ads.port,
    withSnapshotsMs: withSnapshots,
    xdsRoutes: routesPerGateway.reduce((a, b) => a + b, 0),
    roles: cp.cache.roles(),
  });

  let edit = 0;
  const rl = createInterface({ input: process.stdin });
  for await (const line of rl) {
    const cmd = JSON.parse(line);
    if (cmd.type === 'incremental') {
      // One route edit → flush → the cache holds the new snapshot (encoded), as the running control plane does.
      const times: number[] = [];
      const gwBefore = (cp.pipeline.gateways as any).recomputations;
      for (let i = 0; i < cmd.n; i++) {
        edit++;
        const r = (i * 37) % ROUTES;
        const role = `gwvendor-kube-gateway-api~infra~gw-${r % GATEWAYS}`;
        const v0 = cp.cache.get(role)!.version;
        const s = performance.now();
        cp.pipeline.httpRoutes.upsert(route(r, edit));
        cp.pipeline.rt.flush();
        times.push(performance.now() - s);
        if (cp.cache.get(role)!.version !== v0 + 1) throw new Error('no new snapshot version');
      }
      send({
        type: 'incremental',
        times,
        gatewayRecomputations: (cp.pipeline.gateways as any).recomputations - gwBefore,
      });
    } else if (cmd.type === 'edit-route') {
      edit++;
      cp.pipeline.httpRoutes.upsert(route(cmd.route, edit));
      cp.pipeline.rt.flush();
      send({ type: 'edited', version: cp.cache.get(cmd.role)!.version });
    } else if (cmd.type === 'edit-endpoints') {
      edit++;
      // svc-0 backs rules on every Gateway: its endpoints change on all 10 snapshots.
      cp.pipeline.endpointSlices.upsert({
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: { name: 'svc-0-1', namespace: 'apps', labels: { 'kubernetes.io/service-name': 'svc-0' } },
        addressType: 'IPv4',
        endpoints: [{ addresses: [`127.11.${edit % 250}.${(edit >> 8) % 250}`], conditions: { ready: true } }],
        ports: [{ name: 'http', port: 8080 }],
      });
      cp.pipeline.rt.flush();
      send({ type: 'edited' });
    } else if (cmd.type === 'rss') {
      // Steady state: what the process holds once idle after the burst of work (as a deployed control plane between
      // changes), and the peak it reached during the run. V8 decides when to give memory back; nothing is forced.
      mem('right after the pushes');
      const busy = process.memoryUsage();
      await new Promise((r) => setTimeout(r, IDLE_S * 1000));
      mem('serving, idle');
      const m = process.memoryUsage();
      const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
      send({
        type: 'rss',
        rssMb: m.rss / 1048576,
        peakRssMb: hwm ? Number(hwm[1]) / 1024 : Number.NaN,
        heapUsedMb: m.heapUsed / 1048576,
        heapTotalMb: m.heapTotal / 1048576,
        externalMb: m.external / 1048576,
        rightAfterWorkMb: busy.rss / 1048576,
        connected: cp.ads.connected().length,
      });
    } else if (cmd.type === 'stop') {
      await cp.stop();
      process.exit(0);
    }
  }
}

/** NODE_OPTIONS of the control plane's container in the install manifest: the bench runs it as deployed. */
function deploymentNodeFlags(): string[] {
  const text = readFileSync(join(root, 'system', 'manifests', 'install', 'gwvendor.yaml'), 'utf8');
  const m = /- name: NODE_OPTIONS\s+value: "?([^"\n]*)"?/.exec(text);
  return m ? m[1].split(' ').filter(Boolean) : [];
}

// ---- the proxies (this process) -----------------------------------------------------------------------------

interface Client {
  received: { type: string; version: string; at: number }[];
  close(): void;
}

async function adsClient(
  port: number,
  node: string,
  role: string,
  adsService: grpc.ServiceDefinition,
): Promise<Client> {
  const Ctor = grpc.makeClientConstructor(adsService, 'ADS') as any;
  const c = new Ctor(`127.0.0.1:${port}`, grpc.credentials.createInsecure(), {
    'grpc.max_receive_message_length': 256 * 1024 * 1024,
  });
  const call = c.StreamAggregatedResources();
  const received: Client['received'] = [];
  const types = new Set<string>();
  call.on('data', (r: any) => {
    received.push({ type: r.type_url, version: r.version_info, at: performance.now() });
    types.add(r.type_url);
    call.write({ version_info: r.version_info, type_url: r.type_url, response_nonce: r.nonce });
  });
  call.on('error', () => {});
  const T = 'type.googleapis.com/envoy.config.';
  call.write({
    node: { id: node, cluster: 'bench', metadata: { fields: { role: { stringValue: role } } } },
    type_url: `${T}cluster.v3.Cluster`,
  });
  for (const t of ['endpoint.v3.ClusterLoadAssignment', 'listener.v3.Listener', 'route.v3.RouteConfiguration'])
    call.write({ type_url: T + t });
  const deadline = Date.now() + 30_000;
  while (types.size < 4) {
    if (Date.now() > deadline) throw new Error(`${node}: initial config not received`);
    await new Promise((r) => setTimeout(r, 5));
  }
  return {
    received,
    close: () => {
      call.end();
      c.close();
    },
  };
}

/** The full translation's times, from a process of its own (translateChild). */
async function translationRuns(): Promise<{ translationMs: number[] }> {
  step(`translation process: ${ROUTES} HTTPRoutes × ${RULES} rules over ${GATEWAYS} Gateways`);
  const tr = spawn(process.execPath, [fileURLToPath(import.meta.url), '--translate'], {
    stdio: ['ignore', 'pipe', 'inherit'],
    cwd: root,
  });
  let trOut = '';
  tr.stdout!.on('data', (d) => {
    trOut += d;
  });
  await new Promise<void>((resolve, reject) =>
    tr.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`translation process exited ${code}`)))),
  );
  return JSON.parse(trOut.trim().split('\n').pop()!);
}

/**
 * ms from `push()` (which makes the control plane change something and resolves with the new version, if it has one)
 * until every client has received a response of `type` (of that version) after the ones it had; `what` on timeout.
 */
async function pushTime(
  clients: Client[],
  type: string,
  push: () => Promise<string | undefined>,
  what: string,
): Promise<number> {
  const before = clients.map((c) => c.received.length);
  const t0 = performance.now();
  const version = await push();
  const got = (x: Client['received'][number]) =>
    x.type.endsWith(type) && (version === undefined || x.version === version);
  const deadline = Date.now() + 10_000;
  while (clients.some((c, i) => !c.received.slice(before[i]).some(got))) {
    if (Date.now() > deadline) throw new Error(what);
    await new Promise((r) => setImmediate(r));
  }
  const last = Math.max(...clients.map((c, i) => c.received.slice(before[i]).find((x) => x.type.endsWith(type))!.at));
  return last - t0;
}

/** controlplane.json's figures. */
function controlplaneResult(m: {
  load0: number[];
  translated: { translationMs: number[] };
  ready: any;
  inc: any;
  rdsPush: number[];
  edsPush: number[];
  rss: any;
  cpFlags: string[];
}) {
  const { load0, translated, ready, inc, rdsPush, edsPush, rss, cpFlags } = m;
  const load1 = loadavg();
  return {
    date: new Date().toISOString(),
    node: process.version,
    cpus: cpus().length,
    loadavg: { before: load0.map(r1), after: load1.map(r1) },
    scale: {
      gateways: GATEWAYS,
      httpRoutes: ROUTES,
      rulesPerRoute: RULES,
      xdsRoutes: ready.xdsRoutes,
      services: SERVICES,
    },
    fullTranslationMs: {
      median: r1(pct(translated.translationMs, 50)),
      runs: translated.translationMs.map(r1),
      target: TARGETS.fullTranslationMs,
    },
    fullTranslationWithSnapshotsMs: r1(ready.withSnapshotsMs),
    incrementalMs: {
      p50: r1(pct(inc.times, 50)),
      p95: r1(pct(inc.times, 95)),
      max: r1(Math.max(...inc.times)),
      target_p50: TARGETS.incrementalP50Ms,
    },
    gatewayRecomputationsPerEdit: inc.gatewayRecomputations / EDITS,
    push10ProxiesOneGatewayMs: { p50: r1(pct(rdsPush, 50)), max: r1(Math.max(...rdsPush)), target: TARGETS.pushMs },
    push10GatewaysMs: { p50: r1(pct(edsPush, 50)), max: r1(Math.max(...edsPush)), target: TARGETS.pushMs },
    rssMb: {
      value: r1(rss.rssMb),
      peak: r1(rss.peakRssMb),
      heapUsedMb: r1(rss.heapUsedMb),
      heapTotalMb: r1(rss.heapTotalMb),
      externalMb: r1(rss.externalMb),
      rightAfterWorkMb: r1(rss.rightAfterWorkMb),
      idleS: IDLE_S,
      target: TARGETS.rssMb,
    },
    controlPlaneNodeFlags: cpFlags,
  };
}

async function parent(): Promise<void> {
  const load0 = loadavg();
  const { adsService } = await import('../system/shared/envoy/protos.ts');
  const svc = adsService();
  const translated = await translationRuns();
  step(`full translation: ${translated.translationMs.map(r1).join(', ')} ms`);
  step('control plane process');
  const cpFlags =
    process.env.BENCH_CP_FLAGS !== undefined
      ? process.env.BENCH_CP_FLAGS.split(' ').filter(Boolean)
      : deploymentNodeFlags();
  const cpProc: ChildProcess = spawn(process.execPath, [...cpFlags, fileURLToPath(import.meta.url), '--child'], {
    stdio: ['pipe', 'pipe', 'inherit'],
    cwd: root,
  });
  const lines = createInterface({ input: cpProc.stdout! })[Symbol.asyncIterator]();
  const next = async (type: string): Promise<any> => {
    for (;;) {
      const { value, done } = await lines.next();
      if (done) throw new Error('control plane process ended');
      const m = JSON.parse(value);
      if (m.type === type) return m;
    }
  };
  const cmd = (o: unknown) => cpProc.stdin!.write(JSON.stringify(o) + '\n');
  try {
    const ready = await next('ready');
    step(`first sync (translation + snapshots encoded): ${r1(ready.withSnapshotsMs)} ms`);

    cmd({ type: 'incremental', n: EDITS });
    const inc = await next('incremental');
    step(
      `incremental: p50 ${r1(pct(inc.times, 50))} ms, p95 ${r1(pct(inc.times, 95))} ms (${inc.gatewayRecomputations} Gateway recomputations for ${EDITS} edits)`,
    );

    // 10 proxies of gw-0.
    const role0 = 'gwvendor-kube-gateway-api~infra~gw-0';
    const same: Client[] = [];
    for (let i = 0; i < 10; i++) same.push(await adsClient(ready.xdsPort, `gw-0-${i}.infra`, role0, svc));
    const rdsPush: number[] = [];
    for (let k = 0; k < PUSHES; k++) {
      const editRoute = async () => {
        cmd({ type: 'edit-route', route: (k * 10) % ROUTES, role: role0 }); // routes r % 10 == 0 belong to gw-0
        return String((await next('edited')).version);
      };
      const what = 'route edit: not every proxy got the new RouteConfiguration within 10 s';
      rdsPush.push(await pushTime(same, 'RouteConfiguration', editRoute, what));
    }
    step(`route edit → 10 proxies of one Gateway: p50 ${r1(pct(rdsPush, 50))} ms, max ${r1(Math.max(...rdsPush))} ms`);

    // One proxy on each of the 10 Gateways.
    const spread: Client[] = [];
    for (let g = 0; g < GATEWAYS; g++)
      spread.push(await adsClient(ready.xdsPort, `gw-${g}-x.infra`, `gwvendor-kube-gateway-api~infra~gw-${g}`, svc));
    const edsPush: number[] = [];
    for (let k = 0; k < PUSHES; k++) {
      const editEndpoints = async () => {
        cmd({ type: 'edit-endpoints' });
        await next('edited');
        return undefined;
      };
      const what = 'endpoint change: not every proxy got new endpoints within 10 s';
      edsPush.push(await pushTime(spread, 'ClusterLoadAssignment', editEndpoints, what));
    }
    step(
      `endpoint change → one proxy on each of 10 Gateways: p50 ${r1(pct(edsPush, 50))} ms, max ${r1(Math.max(...edsPush))} ms`,
    );

    step(`idle ${IDLE_S} s`);
    cmd({ type: 'rss' });
    const rss = await next('rss');
    step(
      `control plane RSS: ${r1(rss.rssMb)} MB serving ${rss.connected} proxies, idle ${IDLE_S} s (heap used ${r1(rss.heapUsedMb)} of ${r1(rss.heapTotalMb)} MB, external ${r1(rss.externalMb)} MB); ${r1(rss.rightAfterWorkMb)} MB right after the work; peak ${r1(rss.peakRssMb)} MB`,
    );
    for (const c of [...same, ...spread]) c.close();
    cmd({ type: 'stop' });

    const result = controlplaneResult({ load0, translated, ready, inc, rdsPush, edsPush, rss, cpFlags });
    const md = controlplaneMarkdown(result);
    writeReports({ 'controlplane.json': reportJson(result), 'controlplane.md': md });
    process.stdout.write(md);
  } finally {
    if (cpProc.exitCode === null) cpProc.kill('SIGTERM');
  }
}

/** controlplane.md, from the figures of controlplane.json. */
function controlplaneMarkdown(result: {
  date: string;
  node: string;
  cpus: number;
  loadavg: { before: number[]; after: number[] };
  scale: { xdsRoutes: number };
  fullTranslationMs: { median: number };
  fullTranslationWithSnapshotsMs: number;
  incrementalMs: { p50: number; p95: number };
  gatewayRecomputationsPerEdit: number;
  push10ProxiesOneGatewayMs: { p50: number; max: number };
  push10GatewaysMs: { p50: number; max: number };
  rssMb: { value: number; peak: number; heapUsedMb: number; heapTotalMb: number; externalMb: number };
  controlPlaneNodeFlags: string[];
}): string {
  const ok = (v: number, t: number) => (v <= t ? 'ok' : 'MISSED');
  const cpFlags = result.controlPlaneNodeFlags;
  return [
    `# bench:controlplane (${result.date})`,
    '',
    `Node ${result.node}, ${result.cpus} CPUs, load average before ${result.loadavg.before.join(' ')}, after ${result.loadavg.after.join(' ')} (shared machine).`,
    `Scale: ${GATEWAYS} Gateways, ${ROUTES} HTTPRoutes × ${RULES} rules (${result.scale.xdsRoutes} xDS routes), ${SERVICES} Services.`,
    '',
    '| measure | value | target | |',
    '|---|---|---|---|',
    `| full translation (resources → IR → xDS JSON), median of 3 | ${result.fullTranslationMs.median} ms | < ${TARGETS.fullTranslationMs} ms | ${ok(result.fullTranslationMs.median, TARGETS.fullTranslationMs)} |`,
    `| full translation + snapshots encoded (first sync) | ${result.fullTranslationWithSnapshotsMs} ms | | |`,
    `| one-route update → new snapshot, p50 (p95) | ${result.incrementalMs.p50} (${result.incrementalMs.p95}) ms | p50 < ${TARGETS.incrementalP50Ms} ms | ${ok(result.incrementalMs.p50, TARGETS.incrementalP50Ms)} |`,
    `| route edit → 10 proxies of one Gateway, p50 (max) | ${result.push10ProxiesOneGatewayMs.p50} (${result.push10ProxiesOneGatewayMs.max}) ms | < ${TARGETS.pushMs} ms | ${ok(result.push10ProxiesOneGatewayMs.p50, TARGETS.pushMs)} |`,
    `| endpoint change → 1 proxy on each of 10 Gateways, p50 (max) | ${result.push10GatewaysMs.p50} (${result.push10GatewaysMs.max}) ms | < ${TARGETS.pushMs} ms | ${ok(result.push10GatewaysMs.p50, TARGETS.pushMs)} |`,
    `| control plane RSS, 20 proxies connected, idle ${IDLE_S} s after the runs (peak during them) | ${result.rssMb.value} (${result.rssMb.peak}) MB | < ${TARGETS.rssMb} MB | ${ok(result.rssMb.value, TARGETS.rssMb)} |`,
    `| its V8 heap used / total, external (idle) | ${result.rssMb.heapUsedMb} / ${result.rssMb.heapTotalMb} MB, ${result.rssMb.externalMb} MB | | |`,
    '',
    `The control plane process ran with the Node flags of its Deployment (NODE_OPTIONS in system/manifests/install/gwvendor.yaml): \`${cpFlags.join(' ') || '(none)'}\`.`,
    '',
    `Gateway recomputations per route edit: ${result.gatewayRecomputationsPerEdit}.`,
    '',
  ].join('\n');
}

if (process.argv.includes('--child')) await child();
else if (process.argv.includes('--translate')) await translateChild();
else if (process.argv[2] === '--vs') {
  const { translationVersus } = await import('./controlplane/versus.ts');
  await translationVersus(process.argv[3] ?? '', { routes: ROUTES, rules: RULES, gateways: GATEWAYS });
} else await parent();
