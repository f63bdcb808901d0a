// Test helpers: a control plane without a cluster (inputs loaded from YAML), on free ports, logging to stderr only
// when GWVENDOR_TEST_LOG is set.
import { LogRegistry } from '../../shared/log.ts';
import { ControlPlane, type ControlPlaneOptions } from '../controlplane.ts';
import { loadObjects, parseYamlObjects } from '../offline.ts';

export function testLogs(): LogRegistry {
  const level = process.env.GWVENDOR_TEST_LOG ? 'debug' : 'off';
  return new LogRegistry({ level, sink: (l) => process.stderr.write(l + '\n') });
}

/** Starts a control plane on free ports with the given resources, already translated. */
export async function startOfflineControlPlane(
  yaml: string,
  opts: Partial<ControlPlaneOptions> = {},
): Promise<ControlPlane> {
  const cp = new ControlPlane({
    validation: 'strict',
    logs: testLogs(),
    xdsHost: '127.0.0.1',
    xdsPort: 0,
    adminPort: 0,
    ...opts,
  });
  loadObjects(cp.pipeline, parseYamlObjects(yaml));
  await cp.start();
  cp.startSync();
  return cp;
}

/** A port that was free a moment ago. */
export async function freePort(): Promise<number> {
  const net = await import('node:net');
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen({ host: '127.0.0.1', port: 0 }, () => {
      const p = (s.address() as import('node:net').AddressInfo).port;
      s.close(() => resolve(p));
    });
  });
}

export interface HttpResult {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  json(): any;
}

/** One HTTP/1.1 request with any Host header (fetch cannot set Host). */
export async function httpRequest(
  port: number,
  path: string,
  opts: { host?: string; method?: string; headers?: Record<string, string>; timeoutMs?: number } = {},
): Promise<HttpResult> {
  const http = await import('node:http');
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: opts.method ?? 'GET',
        headers: { ...(opts.host ? { host: opts.host } : {}), ...(opts.headers ?? {}) },
        agent: false,
        timeout: opts.timeoutMs ?? 10_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const body = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body, json: () => JSON.parse(body) });
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`request ${path} timed out`)));
    req.on('error', reject);
    req.end();
  });
}

/** Polls until fn returns a value (not undefined) or the time is up; the error names what was awaited. */
export async function until<T>(
  what: string,
  fn: () => Promise<T | undefined>,
  timeoutMs = 20_000,
  everyMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const v = await fn();
      if (v !== undefined) return v;
      last = undefined;
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
}

export interface ProxyProcess {
  adminUrl: string;
  output: string[];
  stop(): Promise<void>;
}

/**
 * Runs the proxy as its own process (`system/main.ts proxy`) with a bootstrap the deployer wrote, its fixed ports
 * (admin 19000, readiness 8082, metrics 9091) moved to free ones so tests can run side by side.
 */
export async function spawnProxy(
  bootstrapText: string,
  opts: { serviceNode: string; logLevel?: string; dir: string },
): Promise<ProxyProcess> {
  const { spawn } = await import('node:child_process');
  const { readFileSync, writeFileSync, existsSync } = await import('node:fs');
  const { join } = await import('node:path');
  const { parse, stringify } = await import('yaml');
  const boot = parse(bootstrapText);
  boot.admin.address.socket_address.port_value = 0;
  for (const l of boot.static_resources.listeners) l.address.socket_address.port_value = 0;
  const file = join(opts.dir, `bootstrap-${opts.serviceNode}.yaml`);
  const addrFile = join(opts.dir, `admin-${opts.serviceNode}.txt`);
  writeFileSync(file, stringify(boot));
  const main = new URL('../../main.ts', import.meta.url).pathname;
  const child = spawn(
    process.execPath,
    [
      main,
      'proxy',
      '-c',
      file,
      '--service-node',
      opts.serviceNode,
      '--log-level',
      opts.logLevel ?? 'info',
      '--admin-address-path',
      addrFile,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, GWLAB_TEST_PROXY: opts.serviceNode } },
  );
  const output: string[] = [];
  const onData = (d: Buffer) => {
    for (const line of d.toString('utf8').split('\n')) if (line) output.push(line);
    if (output.length > 5000) output.splice(0, output.length - 5000);
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const admin = await until(
    'the proxy admin address',
    async () => {
      if (child.exitCode !== null) throw new Error(`proxy exited (${child.exitCode}): ${output.slice(-5).join('\n')}`);
      return existsSync(addrFile) && readFileSync(addrFile, 'utf8').trim()
        ? readFileSync(addrFile, 'utf8').trim()
        : undefined;
    },
    // A bound, not a speed check: the proxy starts in ~1 s alone, 15 s was not enough at load average 40 (npm test).
    60_000,
  );
  return {
    adminUrl: `http://${admin}`,
    output,
    async stop() {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        const t = setTimeout(() => child.kill('SIGKILL'), 3000);
        await exited;
        clearTimeout(t);
      }
    },
  };
}
