// The control plane's in-cluster token (token-file.ts): after the kubelet swaps the token file (a rename, as its
// atomic writer does), the very next request carries the new token. client-node 2.0.1's own FileAuth, which
// loadFromCluster sets up, would keep sending the old one for up to 60 s (dist/file_auth.js); the first test pins that
// behaviour down, as it is the reason for this module.
import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { afterAll, describe, expect, it } from 'vitest';
import { reloadTokenFileOnChange } from './token-file.ts';

const root = mkdtempSync(join(tmpdir(), 'gwvendor-token-file-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const SA = '/var/run/secrets/kubernetes.io/serviceaccount';

/** An in-cluster configuration whose service-account folder is under `prefix` (loadFromCluster's pathPrefix). */
function inCluster(prefix: string): KubeConfig {
  mkdirSync(join(prefix, SA), { recursive: true });
  writeFileSync(join(prefix, SA, 'namespace'), 'gwvendor-system');
  writeFileSync(join(prefix, SA, 'ca.crt'), '');
  const saved = { host: process.env.KUBERNETES_SERVICE_HOST, port: process.env.KUBERNETES_SERVICE_PORT };
  process.env.KUBERNETES_SERVICE_HOST = '127.0.0.1';
  process.env.KUBERNETES_SERVICE_PORT = '6443';
  try {
    const kc = new KubeConfig();
    kc.loadFromCluster(prefix);
    return kc;
  } finally {
    for (const [k, v] of [
      ['KUBERNETES_SERVICE_HOST', saved.host],
      ['KUBERNETES_SERVICE_PORT', saved.port],
    ] as const) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

/** Replaces the token file the way a rename-based writer does: a new file renamed over the old name. */
function swapToken(prefix: string, token: string): void {
  const tmp = join(prefix, SA, '.token.tmp');
  writeFileSync(tmp, token);
  renameSync(tmp, join(prefix, SA, 'token'));
}

async function bearer(kc: KubeConfig): Promise<string | undefined> {
  const opts: any = {};
  await kc.applyToHTTPSOptions(opts);
  return opts.headers?.Authorization;
}

describe('in-cluster token file', () => {
  it("client-node's FileAuth keeps the token it read for a minute (why token-file.ts exists)", async () => {
    const prefix = join(root, 'plain');
    const kc = inCluster(prefix);
    swapToken(prefix, 'first');
    expect(await bearer(kc)).toBe('Bearer first');
    swapToken(prefix, 'second');
    expect(await bearer(kc)).toBe('Bearer first');
  });

  it('with reloadTokenFileOnChange the next request carries the renewed token', async () => {
    const prefix = join(root, 'reload');
    const kc = inCluster(prefix);
    expect(reloadTokenFileOnChange(kc)).toBe(true);
    expect(kc.getCurrentContext()).toBe('inClusterContext');
    expect(kc.getContextObject('inClusterContext')?.namespace).toBe('gwvendor-system');
    swapToken(prefix, 'first\n');
    expect(await bearer(kc)).toBe('Bearer first');
    swapToken(prefix, 'second');
    expect(await bearer(kc)).toBe('Bearer second');
    expect(await bearer(kc)).toBe('Bearer second');
  });

  it('leaves kubeconfigs without a token file alone', () => {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: 'https://127.0.0.1:6443', skipTLSVerify: false }],
      users: [{ name: 'u', token: 'static' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    expect(reloadTokenFileOnChange(kc)).toBe(false);
    expect(kc.getCurrentUser()?.token).toBe('static');
  });
});
