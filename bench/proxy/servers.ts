// bench:proxy's servers, each in its own process: the sample application (direct), the bare Node proxy (bare) and
// this proxy (`system/main.ts proxy` with the route table of route-table.ts), started and checked to answer 200 on
// the measured request before anything is measured.
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { repoRoot, systemMain } from '../shared/paths.ts';
import { startNode, track } from '../shared/processes.ts';
import { proxyBootstrap } from './route-table.ts';
import { APP_PATH, BENCH_ENTRY, HOST, type J, PROXY_PATH } from './settings.ts';

/** One way to the sample application: its name, where to send the measured request, and the process serving it. */
export interface Path {
  name: 'direct' | 'bare' | 'proxy';
  port: number;
  path: string;
  pid: number | undefined;
}

export interface Servers {
  appPid: number;
  appPort: number;
  proxy: { child: ChildProcess; admin: string };
  paths: Path[];
  /** The processes each path runs through, by name, for CPU per request. */
  serversOf: Record<string, Record<string, number>>;
}

export function httpGet(url: string): Promise<string> {
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

/**
 * Starts the proxy process on `bootstrap` and waits for the admin address it writes (--admin-address-path); `root`:
 * the checkout whose proxy it is (bench:proxy --vs: another one's, side by side with this one's).
 */
export async function startProxyProcess(
  bootstrap: J,
  dir: string,
  name: string,
  root = repoRoot,
): Promise<{ child: ChildProcess; admin: string }> {
  const file = join(dir, `${name}.json`);
  const addrFile = join(dir, `${name}.admin`);
  writeFileSync(file, JSON.stringify(bootstrap));
  const child = track(
    spawn(
      process.execPath,
      [join(root, 'system', 'main.ts'), 'proxy', '-c', file, '--admin-address-path', addrFile, '-l', 'warning'],
      {
        stdio: ['ignore', 'ignore', 'pipe'],
        cwd: root,
      },
    ),
  );
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

/** The port of the proxy's (only) listener, from its admin /listeners. */
export async function listenerPort(admin: string): Promise<number> {
  const listeners = JSON.parse(await httpGet(`http://${admin}/listeners?format=json`));
  return listeners.listener_statuses[0].local_address.socket_address.port_value as number;
}

function statusOf(p: Path): Promise<number> {
  return new Promise<number>((resolve, reject) =>
    http
      .get({ host: '127.0.0.1', port: p.port, path: p.path, headers: { host: HOST } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      })
      .on('error', reject),
  );
}

/** The sample application on a free loopback port, without its access log: the upstream of every path. */
export async function startSampleApp(): Promise<{ child: ChildProcess; port: number }> {
  const app = await startNode(
    [systemMain, 'sampleapp', '--port', '0', '--host', '127.0.0.1', '--no-access-log'],
    /"port":(\d+)/,
    'sample app',
  );
  return { child: app.child, port: Number(app.match[1]) };
}

/** Starts the three paths' servers (proxy files in `dir`) and checks that each answers the measured request 200. */
export async function startServers(dir: string): Promise<Servers> {
  const app = await startSampleApp();
  const appPort = app.port;
  const bare = await startNode([BENCH_ENTRY, '--bare', String(appPort)], /bare listening (\d+)/, 'bare proxy');
  const proxy = await startProxyProcess(proxyBootstrap(appPort), dir, 'static');
  const paths: Path[] = [
    { name: 'direct', port: appPort, path: APP_PATH, pid: app.child.pid },
    { name: 'bare', port: Number(bare.match[1]), path: APP_PATH, pid: bare.child.pid },
    { name: 'proxy', port: await listenerPort(proxy.admin), path: PROXY_PATH, pid: proxy.child.pid },
  ];
  // Every path must answer 200 before measuring.
  for (const p of paths) {
    const status = await statusOf(p);
    if (status !== 200) throw new Error(`${p.name}: GET ${p.path} answered ${status}`);
  }
  const appPid = app.child.pid!;
  return {
    appPid,
    appPort,
    proxy,
    paths,
    serversOf: {
      direct: { app: appPid },
      bare: { bare: bare.child.pid!, app: appPid },
      proxy: { proxy: proxy.child.pid!, app: appPid },
    },
  };
}
