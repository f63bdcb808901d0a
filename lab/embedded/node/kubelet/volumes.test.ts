// A pod's volumes without an API server (volumes.ts, with a stand-in for the kubelet's API client): the implicit
// service-account volume in the atomic writer's layout, and token renewal when a refresh fails: the kubelet keeps the
// old token (still valid), reports FailedMount, retries within seconds and writes the next token it gets
// (pkg/kubelet/token/token_manager.go GetServiceAccountToken; the volume is projected again on the next try). Once the
// pod stops, nothing more is requested.
import { readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../../../testing/tmp.ts';
import type { KubeClient } from '../../client/kube-client.ts';
import { eventually } from '../testing/testbed.ts';
import { PodVolumes, SA_VOLUME } from './volumes.ts';

const pod = {
  metadata: { name: 'p', namespace: 'ns', uid: 'u-1' },
  spec: { serviceAccountName: 'default', containers: [{ name: 'c' }] },
};

/** A KubeClient whose TokenRequests get `answers` in turn (a token text, or an error to throw). */
function client(answers: (string | Error)[]) {
  const asked: any[] = [];
  const c = {
    async request(method: string, path: string, body: any) {
      if (method !== 'POST' || !path.endsWith('/serviceaccounts/default/token')) throw new Error(`${method} ${path}?`);
      asked.push(body);
      const a = answers.shift() ?? new Error('no more answers');
      if (a instanceof Error) throw a;
      // The first token was issued 7.7 s ago for 10 s: due for a refresh at once or within 0.3 s (8 s in, minus the
      // jitter of up to 1 s). Later ones are issued now, so the next one stays in place for at least 7 s, long enough
      // to be seen (when every token was due at once, t2 could be replaced within one poll).
      const exp = Date.now() + (asked.length === 1 ? 2300 : 10_000);
      return {
        spec: { ...body.spec, expirationSeconds: 10 },
        status: { token: a, expirationTimestamp: new Date(exp).toISOString() },
      };
    },
  };
  return { client: c as unknown as KubeClient, asked };
}

describe('pod volumes', () => {
  it('writes the service-account volume (token, ca.crt, namespace) through the atomic writer', async () => {
    const dir = tempDir('gwlab-volumes-');
    const { client: c, asked } = client(['t1']);
    const v = new PodVolumes(c, pod, dir, 'CA');
    await v.setUp(pod, '127.130.0.5');
    const sa = v.dirs.get(SA_VOLUME)!;
    expect(readFileSync(join(sa, 'token'), 'utf8')).toBe('t1');
    expect(readFileSync(join(sa, 'ca.crt'), 'utf8')).toBe('CA');
    expect(readFileSync(join(sa, 'namespace'), 'utf8')).toBe('ns');
    expect(readlinkSync(join(sa, 'token'))).toBe('..data/token');
    expect(asked[0].spec).toMatchObject({
      expirationSeconds: 3607,
      boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: 'p', uid: 'u-1' },
    });
  });

  it('keeps the old token when a refresh fails, reports it, retries and writes the next token', async () => {
    const dir = tempDir('gwlab-volumes-');
    const { client: c, asked } = client(['t1', new Error('connection refused'), 't2', 't3', 't4']);
    const v = new PodVolumes(c, pod, dir, 'CA');
    await v.setUp(pod, '127.130.0.5');
    const token = () => readFileSync(join(v.dirs.get(SA_VOLUME)!, 'token'), 'utf8');
    const errors: string[] = [];
    const stop = new AbortController();
    const loop = v.keepTokensFresh(
      stop.signal,
      () => ({ pod, podIP: '127.130.0.5' }),
      (m) => errors.push(m),
    );
    try {
      await eventually(() => errors.length === 1, 10_000, 10);
      expect(token()).toBe('t1'); // the retry comes 1 s after the failure; meanwhile the old token stays
      await eventually(() => token() === 't2', 10_000, 20);
      expect(errors).toEqual(['MountVolume.SetUp failed: failed to refresh token: connection refused']);
    } finally {
      stop.abort();
      await loop;
    }
    const n = asked.length;
    await new Promise((r) => setTimeout(r, 1500));
    expect(asked.length).toBe(n); // stopped: no more TokenRequests
  });
});
