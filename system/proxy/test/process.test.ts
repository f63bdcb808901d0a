// The proxy as a process, the way deployments run it: `system/main.ts proxy -c <bootstrap> ...`. Bad flags and bad
// bootstraps exit non-zero naming the problem; a good one serves, logs in Envoy's format on stderr, and exits 0
// on /quitquitquit. Every process started here is killed in teardown.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SampleApp, startSampleApp } from '../../sampleapp/main.ts';
import { parseArgs, usage } from '../cli.ts';
import FLAGS from '../envoy-flags.json' with { type: 'json' };
import {
  bootstrapJson,
  eventually,
  httpRequest,
  listener,
  route,
  routeConfig,
  staticCluster,
  vhost,
} from '../testing/harness.ts';

const MAIN = fileURLToPath(new URL('../../main.ts', import.meta.url));
const children = new Set<ChildProcess>();
let dir: string;
let app: SampleApp;

interface Run {
  child: ChildProcess;
  stdout: string[];
  stderr: string[];
  exit: Promise<number | null>;
}

function run(args: string[]): Run {
  const child = spawn(process.execPath, [MAIN, 'proxy', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  const stdout: string[] = [];
  const stderr: string[] = [];
  child.stdout!.on('data', (d: Buffer) => stdout.push(d.toString()));
  child.stderr!.on('data', (d: Buffer) => stderr.push(d.toString()));
  const exit = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      children.delete(child);
      resolve(code);
    }),
  );
  return { child, stdout, stderr, exit };
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'gwlab-proxy-'));
  app = await startSampleApp();
});

afterAll(async () => {
  for (const c of children) c.kill('SIGKILL');
  await app?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('command line', () => {
  it('parses Envoy flags; accepts and ignores Envoy-only ones', () => {
    const o = parseArgs([
      '-c',
      '/etc/envoy/envoy.yaml',
      '--service-node',
      'gw-0.ns',
      '--log-level',
      'warn',
      '--component-log-level',
      'upstream:debug,config:trace',
      '--disable-hot-restart',
      '--drain-time-s',
      '30',
      '--log-format',
      '%v',
      '--concurrency',
      '2',
    ]);
    expect(o).toMatchObject({
      configPath: '/etc/envoy/envoy.yaml',
      serviceNode: 'gw-0.ns',
      level: 'warning',
      componentLevels: { upstream: 'debug', config: 'trace' },
      disableHotRestart: true,
      drainTimeS: 30,
      logFormat: '%v',
    });
    expect(parseArgs(['--config-yaml', '{}', '-l', 'debug']).level).toBe('debug');
    expect(parseArgs(['-cfile.yaml']).configPath).toBe('file.yaml');
    expect(() => parseArgs(['-c', 'x', '--bogus'])).toThrow(
      /^PARSE ERROR: Argument: --bogus\n\s+Couldn't find match for argument/,
    );
    expect(() => parseArgs(['-c', 'x', '-l', 'loud'])).toThrow("error: invalid log level specified 'loud'");
    expect(() => parseArgs(['-c', 'x', '--component-log-level', 'upstream'])).toThrow(
      /component log level not correctly specified 'upstream'/,
    );
    expect(() => parseArgs(['-c', 'x', '--component-log-level', 'nope:debug'])).toThrow(
      "error: invalid component specified 'nope'",
    );
    expect(() => parseArgs(['-c'])).toThrow(/Missing a value/);
    expect(() => parseArgs([])).toThrow(/no bootstrap given/);
  });

  it('the flag table (envoy-flags.json): each flag once, of a known kind; --help lists them all in its order', () => {
    const longs = FLAGS.map((f) => f.long);
    expect(new Set(longs).size).toBe(longs.length);
    const shorts = FLAGS.flatMap((f) => ('short' in f ? [f.short] : []));
    expect(new Set(shorts).size).toBe(shorts.length);
    for (const f of FLAGS) expect(['string', 'int', 'bool'], f.long).toContain(f.kind);
    const listed = [...usage().matchAll(/^ {3}(?:-\w <\w+>, {2})?--([\w-]+)/gm)].map((m) => m[1]);
    expect(listed).toEqual(longs);
    // A flag accepted for compatibility parses (a deployment may pass it) and is said to have no effect.
    expect(parseArgs(['-c', 'x', '--use-dynamic-base-id', '--stats-tag', 'a:b']).configPath).toBe('x');
    expect(usage()).toMatch(/--use-dynamic-base-id\n\s+Select an unused base ID \(accepted, no effect\)/);
  });

  it('bad flags exit non-zero naming the flag', async () => {
    const r = run(['-c', '/nope.yaml', '--frobnicate']);
    expect(await r.exit).not.toBe(0);
    expect(r.stderr.join('')).toContain('PARSE ERROR: Argument: --frobnicate');
  });

  it('a missing or invalid bootstrap exits non-zero naming the problem and its JSON path', async () => {
    const bad = path.join(dir, 'bad.yaml');
    writeFileSync(bad, 'static_resources:\n  listeners:\n  - name: l\n    adress: {}\n');
    const noNode = path.join(dir, 'nonode.yaml');
    writeFileSync(noNode, JSON.stringify({ ...bootstrapJson({ xdsPort: 1 }), node: {} }));
    const badCluster = path.join(dir, 'badcluster.yaml');
    const ep = { endpoint: { address: { socket_address: { address: 'not-an-ip', port_value: 1 } } } };
    writeFileSync(
      badCluster,
      JSON.stringify(
        bootstrapJson({
          staticClusters: [
            { name: 'c', type: 'STATIC', load_assignment: { cluster_name: 'c', endpoints: [{ lb_endpoints: [ep] }] } },
          ],
        }),
      ),
    );
    const badPort = path.join(dir, 'badport.yaml');
    writeFileSync(
      badPort,
      JSON.stringify(bootstrapJson({ staticListeners: [listener('l', 70000, { routeConfig: routeConfig('r', []) })] })),
    );
    const cases: Array<[string, string]> = [
      [path.join(dir, 'absent.yaml'), `Invalid path: ${path.join(dir, 'absent.yaml')}`],
      [bad, 'static_resources.listeners[0].adress: unknown field "adress" in envoy.config.listener.v3.Listener'],
      [noNode, "node 'id' and 'cluster' are required"],
      [badCluster, 'malformed IP address: not-an-ip'],
      [
        badPort,
        'Proto constraint validation failed (BootstrapValidationError.StaticResources: embedded message failed validation | caused by StaticResourcesValidationError.Listeners[0]',
      ],
    ];
    const runs = cases.map(([file]) => run(['-c', file]));
    for (let i = 0; i < cases.length; i++) {
      expect(await runs[i]!.exit).not.toBe(0);
      expect(runs[i]!.stderr.join('')).toContain(cases[i]![1]);
    }
  });

  it('--mode validate checks the bootstrap and exits 0', async () => {
    const file = path.join(dir, 'ok.yaml');
    writeFileSync(file, JSON.stringify(bootstrapJson({})));
    const r = run(['-c', file, '--mode', 'validate']);
    expect(await r.exit).toBe(0);
    expect(r.stdout.join('')).toContain(`configuration '${file}' OK`);
  });
});

describe('a proxy process', () => {
  it('serves with a static bootstrap, logs in Envoy format, merges --config-yaml, exits 0 on /quitquitquit', async () => {
    const file = path.join(dir, 'envoy.yaml');
    const addrFile = path.join(dir, 'admin.address');
    const b = bootstrapJson({
      staticClusters: [staticCluster('app', [['127.0.0.1', app.port]])],
      staticListeners: [
        listener('main', 0, { routeConfig: routeConfig('main', [vhost('all', ['*'], [route('/', 'app')])]) }),
      ],
    });
    writeFileSync(file, JSON.stringify(b));
    const r = run([
      '-c',
      file,
      '--service-node',
      'gw-0.gwvendor-system',
      '--service-cluster',
      'gw.gwvendor-system',
      '-l',
      'info',
      '--component-log-level',
      'admin:warning',
      '--disable-hot-restart',
      '--admin-address-path',
      addrFile,
      '--config-yaml',
      '{"node":{"metadata":{"role":"gwvendor-kube-gateway-api~gwvendor-system~gw"}}}',
    ]);
    const admin = await eventually(
      () => {
        try {
          return `http://${readFileSync(addrFile, 'utf8')}`;
        } catch {
          return undefined;
        }
      },
      15_000,
      'admin address file',
    );
    await eventually(async () => (await httpRequest(`${admin}/ready`)).status === 200, 15_000, 'LIVE');
    const info = JSON.parse((await httpRequest(`${admin}/server_info`)).body);
    expect(info.node).toMatchObject({
      id: 'gw-0.gwvendor-system',
      cluster: 'gw.gwvendor-system',
      metadata: { role: 'gwvendor-kube-gateway-api~gwvendor-system~gw' },
    });
    expect(info.command_line_options).toMatchObject({
      log_level: 'info',
      component_log_level: 'admin:warning',
      disable_hot_restart: true,
    });
    const listeners = (await httpRequest(`${admin}/listeners?format=json`)).body;
    const port = JSON.parse(listeners).listener_statuses[0].local_address.socket_address.port_value;
    const res = await httpRequest(`http://127.0.0.1:${port}/headers`, { host: 'www.example.com' });
    expect(res.status).toBe(200);
    expect(res.headers.server).toBe('envoy');
    expect((await httpRequest(`${admin}/quitquitquit`, { method: 'POST' })).body).toBe('OK\n');
    expect(await r.exit).toBe(0);
    const err = r.stderr.join('').split('\n').filter(Boolean);
    expect(
      err.some((l) =>
        /^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}\]\[\d+\]\[info\]\[main\] \[system\/proxy\/server\.ts:\d+\] starting main dispatch loop$/.test(
          l,
        ),
      ),
    ).toBe(true);
    // The access log (stdout logger) went to stdout in Envoy's default format.
    expect(r.stdout.join('')).toMatch(
      /^\[\d{4}-\d\d-\d\dT[^\]]+\] "GET \/headers HTTP\/1\.1" 200 - 0 \d+ \d+ \d+ "-" "-" "[0-9a-f-]+" "www\.example\.com" "127\.0\.0\.1:\d+"\n$/m,
    );
  });

  it('SIGTERM stops it cleanly', async () => {
    const file = path.join(dir, 'envoy2.yaml');
    writeFileSync(file, JSON.stringify(bootstrapJson({})));
    const r = run(['-c', file, '-l', 'info']);
    await eventually(() => r.stderr.join('').includes('starting main dispatch loop'), 15_000, 'started');
    r.child.kill('SIGTERM');
    expect(await r.exit).toBe(0);
  });
});
