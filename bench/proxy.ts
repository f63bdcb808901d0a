// `npm run bench:proxy`: the proxy's figures from issue 4, three paths side by side in one run, each server in its
// own process:
//   direct — the sample application;
//   bare   — a bare pass-through Node proxy (node:http server + undici Pool), the runtime's ceiling;
//   proxy  — this proxy (system/main.ts proxy) with a realistic route table (50 virtual hosts, 1,000 routes with
//            header and regex matches, retries, header mutations, the cors filter).
// Phases: 50 connections for 10 s (autocannon) → req/s, p50/p99, errors, RSS; a fixed rate of half the proxy's
// maximum through each path (an open-loop client with microsecond timing) → p50/p99 and the latency added against
// direct (each measurement from a fresh load-generator process); a soak at that rate through the proxy → RSS growth; a 1,000-route RouteConfiguration pushed over ADS →
// time to ACK; route lookup cost against the number of virtual hosts.
// Writes reports/bench/proxy.json and proxy.md. BENCH_DURATION_S, BENCH_SOAK_S, BENCH_CONNECTIONS override.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type net from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
// @ts-expect-error autocannon ships no type declarations
import autocannon from 'autocannon';
import { Pool } from 'undici';
import { compileRouteConfiguration } from '../system/proxy/config/route-table.ts';
import { bootstrapJson, cla, edsCluster, listener, staticCluster } from '../system/proxy/testing/harness.ts';
import { startTestXdsServer } from '../system/proxy/testing/xds-server.ts';
import { decode, encode } from '../system/shared/envoy/protojson.ts';
import { TYPE_URL } from '../system/shared/envoy/protos.ts';

type J = Record<string, any>;

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const MAIN = join(root, 'system', 'main.ts');
const DURATION = Number(process.env.BENCH_DURATION_S ?? 10);
const SOAK = Number(process.env.BENCH_SOAK_S ?? 60);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const HOST = 'www.example.com';
/** Through the proxy the route rewrites /api/v20/ to /; direct and bare ask the app for /headers itself. */
const PROXY_PATH = '/api/v20/headers';
const APP_PATH = '/headers';
const TARGETS = { throughputVsBare: 0.8, addedP50Ms: 1, addedP99Ms: 5, rssGrowth: 0.2, applyMs: 100 };

const step = (s: string) => process.stderr.write(`[bench:proxy] ${s}\n`);
const children = new Set<ChildProcess>();
const r2 = (n: number) => Math.round(n * 100) / 100;

function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : Number.NaN;
}

function pct(sorted: Float64Array, p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** Spawns a child and resolves with the first stdout line matching `ready`. */
function start(
  args: string[],
  ready: RegExp,
  what: string,
  timeoutMs = 30_000,
): Promise<{ child: ChildProcess; match: RegExpExecArray }> {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], cwd: root });
  children.add(child);
  child.once('exit', () => children.delete(child));
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    const t = setTimeout(
      () => reject(new Error(`${what} did not answer in ${timeoutMs / 1000} s: ${err.slice(-2000)}`)),
      timeoutMs,
    );
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = ready.exec(out);
      if (m) {
        clearTimeout(t);
        resolve({ child, match: m });
      }
    });
    child.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      const m = ready.exec(err);
      if (m) {
        clearTimeout(t);
        resolve({ child, match: m });
      }
    });
    child.once('exit', (code) => {
      clearTimeout(t);
      reject(new Error(`${what} exited with ${code}: ${err.slice(-2000)}`));
    });
  });
}

/** Starts the proxy process and waits for the admin address it writes (--admin-address-path). */
async function startProxyProcess(
  bootstrap: J,
  dir: string,
  name: string,
): Promise<{ child: ChildProcess; admin: string }> {
  const file = join(dir, `${name}.json`);
  const addrFile = join(dir, `${name}.admin`);
  writeFileSync(file, JSON.stringify(bootstrap));
  const child = spawn(
    process.execPath,
    [MAIN, 'proxy', '-c', file, '--admin-address-path', addrFile, '-l', 'warning'],
    { stdio: ['ignore', 'ignore', 'pipe'], cwd: root },
  );
  children.add(child);
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  for (let i = 0; i < 600; i++) {
    try {
      return { child, admin: readFileSync(addrFile, 'utf8') };
    } catch {
      if (child.exitCode !== null) throw new Error(`proxy exited ${child.exitCode}: ${err.slice(-2000)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  throw new Error(`proxy did not start in 30 s: ${err.slice(-2000)}`);
}

// ---------------------------------------------------------------------------------------------------------------
// The bare pass-through proxy (child role)

async function bare(upstreamPort: number): Promise<void> {
  const pool = new Pool(`http://127.0.0.1:${upstreamPort}`, { connections: 128, pipelining: 1 });
  const hop = new Set(['connection', 'keep-alive', 'transfer-encoding', 'proxy-connection', 'upgrade', 'te']);
  const server = http.createServer((req, res) => {
    const headers: Record<string, string | string[]> = {};
    for (const [k, v] of Object.entries(req.headers)) if (v !== undefined && !hop.has(k)) headers[k] = v;
    pool
      .request({
        path: req.url ?? '/',
        method: req.method as 'GET',
        headers,
        body: req.method === 'GET' || req.method === 'HEAD' ? null : req,
      })
      .then(async (r) => {
        const out: Record<string, string | string[]> = {};
        for (const [k, v] of Object.entries(r.headers)) if (v !== undefined && !hop.has(k)) out[k] = v;
        res.writeHead(r.statusCode, out);
        for await (const chunk of r.body) res.write(chunk);
        res.end();
      })
      .catch(() => {
        res.writeHead(502).end();
      });
  });
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((r) => server.listen({ host: '127.0.0.1', port: 0 }, r));
  process.stdout.write(`bare listening ${(server.address() as net.AddressInfo).port}\n`);
}

function httpGet(url: string): Promise<string> {
  return new Promise((resolve, reject) =>
    http
      .get(url, (res) => {
        let b = '';
        res.on('data', (c) => (b += c));
        res.on('end', () => resolve(b));
      })
      .on('error', reject),
  );
}

// ---------------------------------------------------------------------------------------------------------------
// A realistic route table

function realisticRoutes(appCluster: string): J {
  const vhosts: J[] = [];
  for (let v = 0; v < 49; v++) {
    const routes: J[] = [];
    for (let r = 0; r < 20; r++) {
      routes.push({
        name: `svc${v}-r${r}`,
        match:
          r % 4 === 0
            ? { safe_regex: { regex: `/v${r}/items/[0-9]+` } }
            : { prefix: `/api/v${r}/`, headers: [{ name: 'x-tenant', string_match: { exact: `t${r}` } }] },
        route: {
          cluster: `svc-${v % 10}`,
          timeout: '10s',
          retry_policy: { retry_on: '5xx,connect-failure', num_retries: 2 },
        },
        request_headers_to_add: [{ header: { key: 'x-route', value: `svc${v}-r${r}` } }],
      });
    }
    vhosts.push({
      name: `svc-${v}`,
      domains: [`svc-${v}.example.com`, `svc-${v}.example.com:8080`, `*.svc-${v}.internal`],
      routes,
    });
  }
  // The target: the 20th route of www.example.com, after 19 routes that do not match.
  const www: J[] = [];
  for (let r = 0; r < 19; r++) {
    www.push({
      name: `www-r${r}`,
      match:
        r % 3 === 0
          ? { safe_regex: { regex: `/api/v${r}/[a-z]+/[0-9]+` } }
          : { prefix: `/api/v${r}/`, headers: [{ name: 'x-version', string_match: { prefix: 'beta' } }] },
      route: { cluster: 'svc-0' },
    });
  }
  www.push({
    name: 'www-target',
    match: { prefix: '/api/v20/' },
    route: {
      cluster: appCluster,
      prefix_rewrite: '/',
      timeout: '15s',
      retry_policy: { retry_on: '5xx', num_retries: 1 },
    },
    request_headers_to_add: [{ header: { key: 'x-gateway', value: 'gwlab' } }],
    response_headers_to_add: [{ header: { key: 'x-route', value: 'www-target' } }],
  });
  vhosts.push({ name: 'www', domains: [HOST, `${HOST}:8080`], routes: www });
  return { name: 'listener~8080', virtual_hosts: vhosts };
}

function proxyBootstrap(appPort: number): J {
  const clusters: J[] = [staticCluster('app', [['127.0.0.1', appPort]])];
  for (let i = 0; i < 10; i++) clusters.push(staticCluster(`svc-${i}`, [['127.0.0.1', 1]]));
  const l = listener('listener~8080', 0, {
    accessLog: false,
    routeConfig: realisticRoutes('app'),
    filters: [
      {
        name: 'envoy.filters.http.cors',
        typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.cors.v3.Cors' },
      },
    ],
    hcm: { strip_any_host_port: true },
  });
  return bootstrapJson({ staticClusters: clusters, staticListeners: [l] });
}

// ---------------------------------------------------------------------------------------------------------------
// Load

interface Throughput {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
}

function autocannonRun(port: number, path: string, seconds: number): Promise<Throughput> {
  return new Promise((resolve, reject) => {
    autocannon(
      { url: `http://127.0.0.1:${port}${path}`, connections: CONNECTIONS, duration: seconds, headers: { host: HOST } },
      (
        err: Error | null,
        r: {
          requests: { average: number };
          latency: { p50: number; p99: number };
          errors: number;
          timeouts: number;
          non2xx: number;
        },
      ) => {
        if (err) return reject(err);
        resolve({
          rps: Math.round(r.requests.average),
          p50: r.latency.p50,
          p99: r.latency.p99,
          errors: r.errors + r.timeouts,
          non2xx: r.non2xx,
        });
      },
    );
  });
}

interface FixedRate {
  rate: number;
  sent: number;
  /** The rate the generator actually achieved (requests sent over the time it took to send them). */
  achievedRate: number;
  p50: number;
  p99: number;
  errors: number;
}

/**
 * The fixed-rate generator in a fresh process per measurement: in the bench process itself it ran after autocannon,
 * with a heap grown to ~200 MB whose 13-24 ms scavenges (measured with a gc PerformanceObserver) landed in every
 * path's p99. `onTick` samples while it runs (the soak's RSS).
 */
async function fixedRateIsolated(
  port: number,
  path: string,
  rate: number,
  seconds: number,
  onTick?: () => void,
): Promise<FixedRate> {
  const timer = onTick ? setInterval(onTick, 1000) : undefined;
  try {
    const { child, match } = await start(
      [fileURLToPath(import.meta.url), '--load', String(port), path, String(rate), String(seconds)],
      /^load-result (.*)$/m,
      'load generator',
      (seconds + 60) * 1000,
    );
    child.kill('SIGKILL');
    return JSON.parse(match[1]!) as FixedRate;
  } finally {
    if (timer) clearInterval(timer);
  }
}

/** Open-loop load at `rate` req/s over keep-alive connections, latency per request with performance.now(). */
async function fixedRate(
  port: number,
  path: string,
  rate: number,
  seconds: number,
  onTick?: (elapsedS: number) => void,
): Promise<FixedRate> {
  const pool = new Pool(`http://127.0.0.1:${port}`, { connections: CONNECTIONS, pipelining: 1 });
  const total = Math.round(rate * seconds);
  const lat = new Float64Array(total);
  let done = 0;
  let errors = 0;
  let sent = 0;
  const t0 = performance.now();
  let lastSentAt = t0;
  await new Promise<void>((resolve) => {
    const tick = () => {
      const elapsed = (performance.now() - t0) / 1000;
      onTick?.(elapsed);
      const due = Math.min(total, Math.floor(elapsed * rate));
      while (sent < due) {
        const i = sent++;
        const s = performance.now();
        pool
          .request({ path, method: 'GET', headers: { host: HOST } })
          .then(async (r) => {
            await r.body.dump();
            if (r.statusCode !== 200) errors++;
          })
          .catch(() => {
            errors++;
          })
          .finally(() => {
            lat[i] = performance.now() - s;
            if (++done === total) resolve();
          });
      }
      lastSentAt = performance.now();
      if (sent < total) setTimeout(tick, 1);
    };
    tick();
  });
  await pool.close();
  const sorted = lat.slice(0, done).sort();
  const r3 = (n: number) => Math.round(n * 1000) / 1000;
  const achievedRate = Math.round(sent / ((lastSentAt - t0) / 1000 || 1));
  return { rate, sent, achievedRate, p50: r3(pct(sorted, 50)), p99: r3(pct(sorted, 99)), errors };
}

// ---------------------------------------------------------------------------------------------------------------
// RouteConfiguration apply time over ADS, and lookup cost

async function applyTime(): Promise<{
  routes: number;
  bytes: number;
  ackMs: number[];
  medianMs: number;
  maxMs: number;
  decodeCompileMs: number;
  updateDurationMs: { p50: number | null; p99: number | null; max: number | null } | undefined;
}> {
  const xds = await startTestXdsServer();
  const dir = mkdtempSync(join(tmpdir(), 'gwlab-bench-proxy-'));
  try {
    const ads = await startProxyProcess(bootstrapJson({ xdsPort: xds.port }), dir, 'ads');
    const app = { port: 1 };
    const rcFor = (i: number): J => ({
      ...realisticRoutes('app'),
      name: 'listener~8080',
      request_headers_to_add: [{ header: { key: 'x-gen', value: String(i) } }],
    });
    xds.setSnapshot('0', {
      clusters: [edsCluster('app'), ...Array.from({ length: 10 }, (_, i) => edsCluster(`svc-${i}`))],
      endpoints: [
        cla('app', [['127.0.0.1', app.port]]),
        ...Array.from({ length: 10 }, (_, i) => cla(`svc-${i}`, [['127.0.0.1', 1]])),
      ],
      listeners: [listener('listener~8080', 0, { rds: 'listener~8080', accessLog: false })],
      routes: [rcFor(0)],
    });
    await xds.waitFor(
      (r) => r.type_url === TYPE_URL.routeConfiguration && r.kind === 'ack' && r.version_info === '0',
      30_000,
    );
    // Push → ACK as the control plane sees it (the resource is encoded before the clock starts), and the proxy's
    // own update_duration (from the response's arrival to its ACK) from its stats.
    const ackMs: number[] = [];
    for (let i = 1; i <= 7; i++) {
      const from = xds.requests.length;
      xds.stage(TYPE_URL.routeConfiguration, String(i), [rcFor(i)]);
      const t = performance.now();
      xds.publish(TYPE_URL.routeConfiguration);
      await xds.waitFor(
        (r) => r.type_url === TYPE_URL.routeConfiguration && r.kind === 'ack' && r.version_info === String(i),
        30_000,
        from,
      );
      ackMs.push(r2(performance.now() - t));
    }
    const stats = JSON.parse(await httpGet(`http://${ads.admin}/stats?format=json&filter=rds\\..*update_duration`));
    const q = stats.stats.find((x: J) => x.histograms)?.histograms;
    const cq = q?.computed_quantiles?.[0]?.values as Array<{ cumulative: number | null }> | undefined;
    const updateDuration = cq ? { p50: cq[2]!.cumulative, p99: cq[6]!.cumulative, max: cq[9]!.cumulative } : undefined;
    const rc = rcFor(99);
    const bytes = encode('envoy.config.route.v3.RouteConfiguration', rc);
    // The same work in this process, without gRPC: decode to canonical JSON and compile.
    let best = Number.POSITIVE_INFINITY;
    for (let i = 0; i < 5; i++) {
      const t = performance.now();
      compileRouteConfiguration(decode('envoy.config.route.v3.RouteConfiguration', bytes), {
        validateClustersDefault: false,
      });
      best = Math.min(best, performance.now() - t);
    }
    const sorted = [...ackMs].sort((a, b) => a - b);
    const routes = (rc.virtual_hosts as J[]).reduce((n: number, v: J) => n + v.routes.length, 0);
    return {
      routes,
      bytes: bytes.length,
      ackMs,
      medianMs: sorted[Math.floor(sorted.length / 2)]!,
      maxMs: sorted.at(-1)!,
      decodeCompileMs: r2(best),
      updateDurationMs: updateDuration,
    };
  } finally {
    await xds.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * ns per route() call (virtual host + the 10th route of it) against the number of virtual hosts, half the hosts
 * matched exactly and half by a `*.suffix` wildcard; next to it a linear scan over the domains (what a naive
 * matcher would cost) for contrast.
 */
function lookupCost(): Array<{ vhosts: number; nsPerLookup: number; linearScanNs: number }> {
  const out: Array<{ vhosts: number; nsPerLookup: number; linearScanNs: number }> = [];
  for (const n of [10, 100, 1000, 10000]) {
    const vhosts: J[] = [];
    for (let v = 0; v < n; v++) {
      const routes = Array.from({ length: 10 }, (_, r) => ({ match: { prefix: `/p${r}/` }, route: { cluster: 'c' } }));
      vhosts.push({ name: `v${v}`, domains: [`host-${v}.example.com`, `*.w${v}.example.com`], routes });
    }
    const table = compileRouteConfiguration({ name: 'rc', virtual_hosts: vhosts }, { validateClustersDefault: false });
    const hosts = Array.from({ length: 1024 }, (_, i) =>
      i % 2 ? `host-${(i * 7919) % n}.example.com` : `a.w${(i * 104729) % n}.example.com`,
    );
    const input = { path: '/p9/x', query: '', header: () => undefined };
    let found = 0;
    for (let i = 0; i < 20000; i++) if (table.route(hosts[i & 1023]!, input)) found++;
    const iters = 200_000;
    const t = performance.now();
    for (let i = 0; i < iters; i++) if (table.route(hosts[i & 1023]!, input)) found++;
    const ns = ((performance.now() - t) * 1e6) / iters;
    // Linear scan baseline.
    const scan = (h: string) => {
      for (const v of vhosts)
        for (const d of v.domains as string[]) if (d === h || (d.startsWith('*') && h.endsWith(d.slice(1)))) return v;
      return undefined;
    };
    const scanIters = Math.max(200, Math.floor(2_000_000 / n));
    const t2 = performance.now();
    for (let i = 0; i < scanIters; i++) if (scan(hosts[i & 1023]!)) found++;
    const scanNs = ((performance.now() - t2) * 1e6) / scanIters;
    if (found === 0) throw new Error('lookups found nothing');
    out.push({ vhosts: n, nsPerLookup: Math.round(ns), linearScanNs: Math.round(scanNs) });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const load0 = loadavg();
  step(`machine: ${cpus().length} cpus, load ${load0.map((l) => l.toFixed(2)).join(' ')}`);
  const dir = mkdtempSync(join(tmpdir(), 'gwlab-bench-proxy-'));
  try {
    const app = await start(
      [MAIN, 'sampleapp', '--port', '0', '--host', '127.0.0.1', '--no-access-log'],
      /"port":(\d+)/,
      'sample app',
    );
    const appPort = Number(app.match[1]);
    const bareP = await start(
      [fileURLToPath(import.meta.url), '--bare', String(appPort)],
      /bare listening (\d+)/,
      'bare proxy',
    );
    const barePort = Number(bareP.match[1]);
    const px = await startProxyProcess(proxyBootstrap(appPort), dir, 'static');
    const adminAddr = px.admin;
    const listeners = JSON.parse(await httpGet(`http://${adminAddr}/listeners?format=json`));
    const proxyPort = listeners.listener_statuses[0].local_address.socket_address.port_value as number;
    const paths: Array<{ name: string; port: number; path: string; pid: number | undefined }> = [
      { name: 'direct', port: appPort, path: APP_PATH, pid: app.child.pid },
      { name: 'bare', port: barePort, path: APP_PATH, pid: bareP.child.pid },
      { name: 'proxy', port: proxyPort, path: PROXY_PATH, pid: px.child.pid },
    ];
    // Every path must answer 200 before measuring.
    for (const p of paths) {
      const status = await new Promise<number>((resolve, reject) =>
        http
          .get({ host: '127.0.0.1', port: p.port, path: p.path, headers: { host: HOST } }, (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          })
          .on('error', reject),
      );
      if (status !== 200) throw new Error(`${p.name}: GET ${p.path} answered ${status}`);
    }

    step(`throughput: ${CONNECTIONS} connections, ${DURATION} s per path (after a 2 s warm-up)`);
    const throughput: Record<string, Throughput & { rssMb: number }> = {};
    for (const p of paths) {
      await autocannonRun(p.port, p.path, 2);
      const t = await autocannonRun(p.port, p.path, DURATION);
      throughput[p.name] = { ...t, rssMb: r2(rssMb(p.pid!)) };
      step(
        `  ${p.name}: ${t.rps} req/s p50 ${t.p50} ms p99 ${t.p99} ms errors ${t.errors} non2xx ${t.non2xx} rss ${throughput[p.name]!.rssMb} MB`,
      );
    }
    const rate = Math.max(50, Math.floor(throughput.proxy!.rps / 2));
    step(`fixed rate: ${rate} req/s (half the proxy's maximum), ${DURATION} s per path`);
    const fixed: Record<string, FixedRate> = {};
    for (const p of paths) {
      await fixedRateIsolated(p.port, p.path, rate, 1);
      fixed[p.name] = await fixedRateIsolated(p.port, p.path, rate, DURATION);
      const f = fixed[p.name]!;
      step(`  ${p.name}: p50 ${f.p50} ms p99 ${f.p99} ms errors ${f.errors} (achieved ${f.achievedRate} req/s)`);
    }
    step(`soak: ${rate} req/s through the proxy for ${SOAK} s`);
    const pid = px.child.pid!;
    const rssStart = rssMb(pid);
    let rssMax = rssStart;
    const soak = await fixedRateIsolated(proxyPort, PROXY_PATH, rate, SOAK, () => {
      rssMax = Math.max(rssMax, rssMb(pid));
    });
    const rssEnd = rssMb(pid);
    step(`  rss ${r2(rssStart)} → ${r2(rssEnd)} MB (max ${r2(rssMax)}), errors ${soak.errors}`);
    step('RouteConfiguration of 1,000 routes over ADS: push → ACK');
    const apply = await applyTime();
    step(
      `  ${apply.routes} routes, ${apply.bytes} bytes: median ${apply.medianMs} ms, max ${apply.maxMs} ms (decode+compile alone ${apply.decodeCompileMs} ms)`,
    );
    step('route lookup cost against the number of virtual hosts');
    const lookups = lookupCost();
    for (const l of lookups)
      step(`  ${l.vhosts} vhosts: ${l.nsPerLookup} ns per lookup (linear scan ${l.linearScanNs} ns)`);
    const load1 = loadavg();

    const result = {
      date: new Date().toISOString(),
      machine: { cpus: cpus().length, node: process.version, loadBefore: load0.map(r2), loadAfter: load1.map(r2) },
      settings: {
        connections: CONNECTIONS,
        durationS: DURATION,
        soakS: SOAK,
        proxyPath: PROXY_PATH,
        appPath: APP_PATH,
        routes: 1000,
        virtualHosts: 50,
      },
      throughput,
      ratios: {
        proxyVsBare: r2(throughput.proxy!.rps / throughput.bare!.rps),
        proxyVsDirect: r2(throughput.proxy!.rps / throughput.direct!.rps),
        bareVsDirect: r2(throughput.bare!.rps / throughput.direct!.rps),
      },
      fixedRate: {
        rate,
        ...fixed,
        addedP50Ms: r2(fixed.proxy!.p50 - fixed.direct!.p50),
        addedP99Ms: r2(fixed.proxy!.p99 - fixed.direct!.p99),
      },
      soak: {
        rate,
        seconds: SOAK,
        rssStartMb: r2(rssStart),
        rssEndMb: r2(rssEnd),
        rssMaxMb: r2(rssMax),
        growth: r2((rssEnd - rssStart) / rssStart),
        errors: soak.errors,
        p50: soak.p50,
        p99: soak.p99,
      },
      apply,
      lookups,
      targets: TARGETS,
    };
    const errorsTotal =
      Object.values(throughput).reduce((n, t) => n + t.errors + t.non2xx, 0) +
      Object.values(fixed).reduce((n, f) => n + f.errors, 0) +
      soak.errors;
    const checks: Array<[string, boolean, string]> = [
      [
        'throughput ≥ 80% of the bare proxy',
        result.ratios.proxyVsBare >= TARGETS.throughputVsBare,
        `${result.ratios.proxyVsBare}`,
      ],
      [
        'added p50 < 1 ms at the fixed rate',
        result.fixedRate.addedP50Ms < TARGETS.addedP50Ms,
        `${result.fixedRate.addedP50Ms} ms`,
      ],
      [
        'added p99 < 5 ms at the fixed rate',
        result.fixedRate.addedP99Ms < TARGETS.addedP99Ms,
        `${result.fixedRate.addedP99Ms} ms`,
      ],
      ['zero errors', errorsTotal === 0, String(errorsTotal)],
      [
        'RSS growth < 20% over the soak',
        result.soak.growth < TARGETS.rssGrowth,
        `${Math.round(result.soak.growth * 100)}%`,
      ],
      [
        '1,000-route RouteConfiguration applied < 100 ms',
        apply.medianMs < TARGETS.applyMs,
        `push → ACK median ${apply.medianMs} ms, update_duration p50 ${apply.updateDurationMs?.p50} ms`,
      ],
      [
        'lookup cost not linear in virtual hosts (1,000× the hosts, under 10% of linear growth)',
        lookups.at(-1)!.nsPerLookup < lookups[0]!.nsPerLookup * 100,
        `${lookups[0]!.nsPerLookup} → ${lookups.at(-1)!.nsPerLookup} ns for 10 → 10,000 vhosts; a linear scan goes ${lookups[0]!.linearScanNs} → ${lookups.at(-1)!.linearScanNs} ns`,
      ],
    ];
    const md = [
      `# bench:proxy — ${result.date}`,
      '',
      `Machine: ${result.machine.cpus} CPUs, Node ${result.machine.node}, load average before ${result.machine.loadBefore.join(' ')}, after ${result.machine.loadAfter.join(' ')} (other processes share this machine; re-run on a quiet one for reference figures).`,
      '',
      `## ${CONNECTIONS} connections, ${DURATION} s (autocannon)`,
      '',
      '| path | req/s | p50 ms | p99 ms | errors | RSS MB |',
      '|---|---|---|---|---|---|',
      ...Object.entries(throughput).map(
        ([n, t]) => `| ${n} | ${t.rps} | ${t.p50} | ${t.p99} | ${t.errors + t.non2xx} | ${t.rssMb} |`,
      ),
      '',
      `Ratios: proxy/bare ${result.ratios.proxyVsBare}, proxy/direct ${result.ratios.proxyVsDirect}, bare/direct ${result.ratios.bareVsDirect}.`,
      '',
      `## Fixed rate ${rate} req/s, ${DURATION} s`,
      '',
      '| path | p50 ms | p99 ms | errors | achieved req/s |',
      '|---|---|---|---|---|',
      ...Object.entries(fixed).map(([n, f]) => `| ${n} | ${f.p50} | ${f.p99} | ${f.errors} | ${f.achievedRate} |`),
      '',
      `Added by the proxy against direct: p50 ${result.fixedRate.addedP50Ms} ms, p99 ${result.fixedRate.addedP99Ms} ms.`,
      '',
      `## Soak ${SOAK} s at ${rate} req/s: RSS ${result.soak.rssStartMb} → ${result.soak.rssEndMb} MB (${Math.round(result.soak.growth * 100)}%, max ${result.soak.rssMaxMb}), errors ${soak.errors}`,
      '',
      `## RouteConfiguration of ${apply.routes} routes (${apply.bytes} bytes) over ADS`,
      '',
      `Push → ACK at the control plane: ${apply.ackMs.join(', ')} ms (median ${apply.medianMs}). The proxy's update_duration (arrival → ACK): p50 ${apply.updateDurationMs?.p50} ms, p99 ${apply.updateDurationMs?.p99} ms. Decode + compile alone, in-process: ${apply.decodeCompileMs} ms.`,
      '',
      '## Route lookup cost',
      '',
      '| virtual hosts | ns per lookup | linear scan ns (contrast) |',
      '|---|---|---|',
      ...lookups.map((l) => `| ${l.vhosts} | ${l.nsPerLookup} | ${l.linearScanNs} |`),
      '',
      '## Targets',
      '',
      ...checks.map(([what, ok, v]) => `- ${ok ? 'met' : 'NOT met'}: ${what} (${v})`),
      '',
    ].join('\n');
    const outDir = join(root, 'reports', 'bench');
    mkdirSync(outDir, { recursive: true });
    writeFileSync(join(outDir, 'proxy.json'), JSON.stringify({ ...result, checks }, null, 2));
    writeFileSync(join(outDir, 'proxy.md'), md);
    process.stdout.write(md);
    step(`wrote ${join(outDir, 'proxy.md')} and proxy.json`);
  } finally {
    for (const c of children) c.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[2] === '--bare') {
  await bare(Number(process.argv[3]));
} else if (process.argv[2] === '--load') {
  const [, , , port, path, rate, seconds] = process.argv;
  const r = await fixedRate(Number(port), path!, Number(rate), Number(seconds));
  process.stdout.write(`load-result ${JSON.stringify(r)}\n`);
  process.exit(0);
} else {
  try {
    await main();
    process.exit(0);
  } catch (err) {
    step(`failed: ${(err as Error).stack ?? err}`);
    for (const c of children) c.kill('SIGKILL');
    process.exit(1);
  }
}
