// Service-account token renewal on the embedded node, with the API server capping token lifetimes at 10 s
// (kube-apiserver's --service-account-max-token-expiration): the kubelet renews every projected token of every running
// pod at 80 % of its TTL (pkg/kubelet/token/token_manager.go), writes the volume atomically (atomic_writer.go), and
// a program in the pod that reads the token from its mountPath before each request is never refused (no 401), across
// several renewals, for both the implicit service-account volume and a projected token with its own audience. Once
// the pod is deleted its tokens are no longer renewed. On main the token was minted once (3,607 s, or the cap) and
// never renewed: with the cap, every request after 10 s was 401.
//
// 10 s and not less: token_manager.go refreshes at exp minus floor(20 % of the TTL) whole seconds minus a jitter, so a
// 6 s token was renewed only 1 s before it expired, and on a busy machine (the unit tests run beside the scenario
// labs) a renewal one second late was refused; a 10 s token is renewed 2 s ahead.
import { existsSync, readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { labPaths } from '../../../state.ts';
import { startTestCluster, type TestCluster } from '../../testing/test-cluster.ts';
import { eventually } from '../testing/testbed.ts';
import { SA_VOLUME } from './volumes.ts';

const TTL = 10;

// Every 250 ms: read both tokens at their mountPaths, present the service-account one to the API server (a
// SelfSubjectReview: 201 for any authenticated user, 401 otherwise), print the code and a hash of each token.
const READER = `
const fs = require('node:fs'), https = require('node:https'), crypto = require('node:crypto');
const SA = '/var/run/secrets/kubernetes.io/serviceaccount';
const h = (s) => crypto.createHash('sha256').update(s).digest('hex').slice(0, 12);
setInterval(() => {
  let sa, vault;
  try { sa = fs.readFileSync(SA + '/token', 'utf8'); vault = fs.readFileSync('/var/run/secrets/tokens/vault-token', 'utf8'); }
  catch (e) { return console.log(JSON.stringify({ t: Date.now(), err: e.code })); }
  const req = https.request({
    host: process.env.KUBERNETES_SERVICE_HOST, port: process.env.KUBERNETES_SERVICE_PORT, method: 'POST',
    path: '/apis/authentication.k8s.io/v1/selfsubjectreviews', ca: fs.readFileSync(SA + '/ca.crt'),
    headers: { authorization: 'Bearer ' + sa, 'content-type': 'application/json' },
  }, (res) => { res.resume(); console.log(JSON.stringify({ t: Date.now(), code: res.statusCode, sa: h(sa), vault: h(vault) })); });
  req.on('error', (e) => console.log(JSON.stringify({ t: Date.now(), err: e.message })));
  req.end(JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' }));
}, 250);
`;

const pod = (name: string) => `
apiVersion: v1
kind: Pod
metadata: {name: ${name}, namespace: tokens}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: reader
    image: gwlab.test/token-reader:1
    volumeMounts: [{name: vault, mountPath: /var/run/secrets/tokens}]
  volumes:
  - name: vault
    projected:
      sources: [{serviceAccountToken: {path: vault-token, audience: vault, expirationSeconds: 7200}}]
`;

interface Line {
  t: number;
  code?: number;
  sa?: string;
  vault?: string;
  err?: string;
}

const claims = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[1], 'base64url').toString());

describe(`service-account token renewal (max token expiration ${TTL} s)`, () => {
  let c: TestCluster;
  const uids: Record<string, string> = {};
  const lines = async (name: string): Promise<Line[]> =>
    (await c.k(['logs', '-n', 'tokens', name]))
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
  const volume = (name: string, vol: string) => join(labPaths(c.lab.name, c.lab.home).pods, uids[name], 'volumes', vol);

  beforeAll(async () => {
    c = await startTestCluster({
      images: { 'gwlab.test/token-reader:1': ['node', '-e', READER] },
      apiServer: { serviceAccountMaxTokenExpirationSeconds: TTL },
    });
    await c.k(['create', 'namespace', 'tokens']);
    await eventually(() => c.k(['get', 'serviceaccount', 'default', '-n', 'tokens']), 10_000, 100);
    await c.k(['apply', '-f', '-'], pod('reader-a') + '---' + pod('reader-b'));
    for (const name of ['reader-a', 'reader-b']) {
      await c.k(['wait', '-n', 'tokens', `pod/${name}`, '--for=condition=Ready', '--timeout=60s']);
      uids[name] = (await c.k(['get', 'pod', name, '-n', 'tokens', '-o', 'jsonpath={.metadata.uid}'])).trim();
    }
  }, 120_000);

  afterAll(async () => {
    await c?.stop();
  });

  it("caps TokenRequests with kube-apiserver's warning", async () => {
    const r = await c.lab.kubectl(['create', 'token', 'default', '-n', 'tokens', '--duration=1h']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`Warning: requested expiration of 3600 seconds shortened to ${TTL} seconds`);
    const cl = claims(r.stdout.trim());
    expect(cl.exp - cl.iat).toBe(TTL);
  });

  it('issues tokens for the capped lifetime', () => {
    const token = readFileSync(join(volume('reader-a', SA_VOLUME), 'token'), 'utf8');
    const cl = claims(token);
    expect(cl.exp - cl.iat).toBe(TTL);
    expect(cl['kubernetes.io'].pod.name).toBe('reader-a');
    const vault = claims(readFileSync(join(volume('reader-a', 'vault'), 'vault-token'), 'utf8'));
    expect(vault.aud).toEqual(['vault']);
    expect(vault.exp - vault.iat).toBe(TTL);
    // The atomic writer's layout.
    expect(readlinkSync(join(volume('reader-a', SA_VOLUME), 'token'))).toBe('..data/token');
    expect(readlinkSync(join(volume('reader-a', SA_VOLUME), '..data'))).toMatch(
      /^\.\.\d{4}_\d\d_\d\d_\d\d_\d\d_\d\d\./,
    );
  });

  it('renews every projected token of every pod; the pod reads each renewed token and is never refused', async () => {
    // 3 renewals of 10 s tokens at ~80 %: about 24 s after the first token. Each pod has two tokens.
    const seen = (await eventually(
      async () => {
        const out: Record<string, Line[]> = {};
        for (const name of ['reader-a', 'reader-b']) {
          const l = await lines(name);
          if (new Set(l.map((x) => x.sa)).size < 4 || new Set(l.map((x) => x.vault)).size < 4) return undefined;
          out[name] = l;
        }
        return out;
      },
      60_000,
      500,
    ))!;
    for (const [name, l] of Object.entries(seen)) {
      const answered = l.filter((x) => x.code !== undefined);
      // The run outlived the first tokens: without renewal, the later requests would have been refused.
      expect(answered.at(-1)!.t - answered[0].t, name).toBeGreaterThan(TTL * 1000);
      expect(
        l.filter((x) => x.err || x.code !== 201),
        `${name}: every read found the file and every request was authenticated`,
      ).toEqual([]);
    }
    expect(seen['reader-a'].map((x) => x.sa)).not.toContain(seen['reader-b'][0].sa);
  }, 90_000);

  it('stops renewing once the pod is deleted', async () => {
    const dir = join(labPaths(c.lab.name, c.lab.home).pods, uids['reader-b']);
    await c.k(['delete', 'pod', 'reader-b', '-n', 'tokens', '--wait=true', '--timeout=30s']);
    expect(c.node.kubelet.worker(uids['reader-b'])).toBeUndefined();
    expect(existsSync(dir)).toBe(false);
    // Two token lifetimes later, nothing wrote its volume again (a renewal would have re-created the folder).
    await new Promise((r) => setTimeout(r, 2 * TTL * 1000));
    expect(existsSync(dir)).toBe(false);
    // The other pod's tokens keep being renewed.
    const before = readFileSync(join(volume('reader-a', SA_VOLUME), 'token'), 'utf8');
    await eventually(
      () => readFileSync(join(volume('reader-a', SA_VOLUME), 'token'), 'utf8') !== before,
      TTL * 1500,
      200,
    );
  }, 90_000);
});
