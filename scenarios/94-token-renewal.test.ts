// Issue 17 point 2, "a lab stops reconciling after about an hour", end to end and in seconds: a lab brought up by
// `lab:up --sa-token-max-expiration 10` (kube-apiserver's --service-account-max-token-expiration) gives pods 10 s
// tokens. The kubelet renews the control plane's token at 80 % of its TTL (pkg/kubelet/token/token_manager.go), the
// control plane reads each renewed token (system/controlplane/kube/token-file.ts), and after several renewals an
// HTTPRoute and its Gateway still get their status written (Accepted), with no request refused (401) in the API
// server's request log. On main the token was minted once and never renewed, and every status write after its expiry
// was 401 (after about an hour with the default lifetime). Also: the flag's validation (exit 2 naming it).
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { labDown } from '../lab/lifecycle.ts';
import { Progress } from '../lab/progress.ts';
import { labPaths, readLabRecord } from '../lab/state.ts';
import { Kube } from '../lab/toolkit/kube.ts';
import { waitFor } from '../lab/toolkit/wait.ts';
import { namespaceWithGateway } from './support/gateway.ts';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const TTL = 10;
const NAME = 'tokens';

function labUp(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['scripts/lab-up.ts', ...args],
      { cwd: ROOT, env, timeout: 180_000, maxBuffer: 64 << 20 },
      (err, so, se) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, out: `${so}\n${se}` }),
    );
  });
}

const claims = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[1], 'base64url').toString());

describe('a lab with 10 s service-account tokens keeps reconciling across renewals', () => {
  const home = mkdtempSync(join(tmpdir(), 'gwlab-tokens-'));
  const env: NodeJS.ProcessEnv = Object.fromEntries(
    Object.entries({ ...process.env, GWLAB_HOME: home, FORCE_COLOR: '0' }).filter(
      ([k]) => !k.startsWith('VITEST') && k !== 'GWLAB_SA_TOKEN_MAX_EXPIRATION',
    ),
  );
  let kube: Kube;
  let tokenFile = '';

  beforeAll(async () => {
    const r = await labUp(['--name', NAME, '--sa-token-max-expiration', String(TTL)], env);
    expect(r.code, r.out).toBe(0);
    const rec = readLabRecord(NAME, home)!;
    expect(rec.saTokenMaxExpirationSeconds).toBe(TTL);
    kube = Kube.fromFile(rec.kubeconfig, rec.context as string);
    const [pod] = await kube.list('v1', 'Pod', 'gwvendor-system', 'app.orch.io/name=gwvendor');
    tokenFile = join(labPaths(NAME, home).pods, pod.metadata!.uid!, 'volumes', 'kube-api-access-gwlab', 'token');
  }, 200_000);

  afterAll(async () => {
    await labDown({ name: NAME, home, progress: new Progress({ quiet: true }) }).catch(() => undefined);
    rmSync(home, { recursive: true, force: true });
  }, 60_000);

  it('renews the control plane token several times, and its status writes still succeed', async () => {
    // Watch the control plane's token file until it has changed three times (four tokens, about 25 s).
    const tokens: string[] = [];
    await waitFor(
      'three renewals of the control plane token',
      async () => {
        const t = readFileSync(tokenFile, 'utf8');
        if (t !== tokens.at(-1)) tokens.push(t);
        return { ok: tokens.length >= 4, seen: `${tokens.length} tokens` };
      },
      { timeoutMs: 60_000, intervalMs: 200 },
    );
    const iats = tokens.map((t) => claims(t).iat);
    for (const t of tokens) expect(claims(t).exp - claims(t).iat).toBe(TTL);
    expect([...iats].sort((a, b) => a - b)).toEqual(iats);
    expect(new Set(tokens).size).toBe(tokens.length);
    // The first tokens have expired by now: a control plane still using them would be refused.
    expect(Date.now() / 1000).toBeGreaterThan(claims(tokens[0]).exp + 1);

    const ns = 'token-renewal';
    await kube.apply(`${namespaceWithGateway(ns)}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: after-renewals, namespace: ${ns}}
spec:
  parentRefs: [{name: gw}]
  hostnames: [renewal.example]
  rules: [{backendRefs: [{name: nowhere, port: 8080}]}]
`);
    await kube.waitForCondition('gateway.networking.k8s.io/v1', 'HTTPRoute', 'after-renewals', ns, 'Accepted', {
      timeoutMs: 30_000,
    });
    await kube.waitForCondition('gateway.networking.k8s.io/v1', 'Gateway', 'gw', ns, 'Accepted', { timeoutMs: 30_000 });

    const refused = readFileSync(labPaths(NAME, home).auditLog, 'utf8')
      .split('\n')
      .filter((l) => l.includes('"code":401'));
    expect(refused, 'requests refused with 401 (an expired token)').toEqual([]);
  }, 120_000);
});

describe('lab:up --sa-token-max-expiration validation', () => {
  const home = mkdtempSync(join(tmpdir(), 'gwlab-tokens-flag-'));
  afterAll(() => rmSync(home, { recursive: true, force: true }));
  const env = { ...process.env, GWLAB_HOME: home, FORCE_COLOR: '0' };

  it('exits 2 naming the flag, the environment variable and the reason, and starts nothing', async () => {
    const cases: [string[], NodeJS.ProcessEnv, string][] = [
      [['--sa-token-max-expiration', '2'], env, '2 s is outside 5 s to 4294967296 s'],
      [['--sa-token-max-expiration', '10m'], env, '"10m" is not a whole number of seconds'],
      [[], { ...env, GWLAB_SA_TOKEN_MAX_EXPIRATION: 'soon' }, '"soon" is not a whole number of seconds'],
      [
        ['--cluster', 'kind', '--sa-token-max-expiration', '60'],
        env,
        'applies to the embedded cluster only, not --cluster kind',
      ],
    ];
    for (const [args, e, reason] of cases) {
      const r = await labUp(['--name', 'never', ...args], e);
      expect(r.code, r.out).toBe(2);
      expect(r.out).toContain(`--sa-token-max-expiration (or GWLAB_SA_TOKEN_MAX_EXPIRATION): ${reason}`);
    }
    expect(readLabRecord('never', home)).toBeUndefined();
  }, 60_000);
});
