// Container-engine detection. The `docker` command exists on machines without an engine (it is only a client), so
// the probe asks the daemon itself: GET /_ping on the socket that DOCKER_HOST (or the default) names.
import { execFile } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import http from 'node:http';
import { delimiter, join } from 'node:path';

export type EngineProbe =
  | { ok: true; endpoint: string; apiVersion?: string }
  | { ok: false; endpoint: string; reason: string };

export function dockerEndpoint(env: NodeJS.ProcessEnv = process.env): string {
  return env.DOCKER_HOST || 'unix:///var/run/docker.sock';
}

export async function probeDockerEngine(env: NodeJS.ProcessEnv = process.env, timeoutMs = 2000): Promise<EngineProbe> {
  const endpoint = dockerEndpoint(env);
  let req: http.RequestOptions;
  if (endpoint.startsWith('unix://')) {
    req = { socketPath: endpoint.slice('unix://'.length), path: '/_ping' };
  } else if (endpoint.startsWith('tcp://') || endpoint.startsWith('http://')) {
    const u = new URL(endpoint.replace(/^tcp:/, 'http:'));
    req = { host: u.hostname, port: Number(u.port || 2375), path: '/_ping' };
  } else {
    return probeWithCli(endpoint, env, timeoutMs);
  }
  return new Promise((resolve) => {
    const r = http.get({ ...req, timeout: timeoutMs }, (res) => {
      res.resume();
      if (res.statusCode === 200) {
        resolve({ ok: true, endpoint, apiVersion: String(res.headers['api-version'] ?? '') || undefined });
      } else {
        resolve({ ok: false, endpoint, reason: `the engine at ${endpoint} answered /_ping with ${res.statusCode}` });
      }
    });
    r.on('timeout', () => r.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    r.on('error', (err: NodeJS.ErrnoException) => {
      const why =
        err.code === 'ENOENT'
          ? 'the socket does not exist'
          : err.code === 'ECONNREFUSED'
            ? 'nothing listens on it'
            : err.message;
      resolve({ ok: false, endpoint, reason: `no Docker engine at ${endpoint}: ${why}` });
    });
  });
}

function probeWithCli(endpoint: string, env: NodeJS.ProcessEnv, timeoutMs: number): Promise<EngineProbe> {
  return new Promise((resolve) => {
    execFile(
      'docker',
      ['version', '--format', '{{.Server.APIVersion}}'],
      { env, timeout: timeoutMs },
      (err, stdout, stderr) => {
        if (err) resolve({ ok: false, endpoint, reason: `docker version failed: ${(stderr || err.message).trim()}` });
        else resolve({ ok: true, endpoint, apiVersion: stdout.trim() });
      },
    );
  });
}

/** The absolute path of a command on PATH, or undefined. */
export function which(cmd: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const p = join(dir, cmd);
    try {
      accessSync(p, constants.X_OK);
      return p;
    } catch {}
  }
  return undefined;
}

export const EMBEDDED_HINT =
  'the default embedded backend needs no container engine: npm run lab:up (without --cluster)';

/** Throws an error that names what is missing and the embedded default when kind/k3s cannot run here. */
export async function requireContainerTools(
  backend: 'kind' | 'k3s',
  env: NodeJS.ProcessEnv = process.env,
): Promise<void> {
  const missing: string[] = [];
  if (!which('docker', env)) missing.push('the docker command is not on PATH');
  if (backend === 'kind' && !which('kind', env))
    missing.push('the kind command is not on PATH (https://kind.sigs.k8s.io)');
  const probe = await probeDockerEngine(env);
  if (!probe.ok) missing.push(probe.reason);
  if (missing.length) {
    throw new Error(`the ${backend} backend cannot run on this machine: ${missing.join('; ')}. ${EMBEDDED_HINT}`);
  }
}
