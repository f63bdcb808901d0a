// Request mirrors as upstream's conformance/utils/http/mirror.go and utils/kubernetes/logs.go (Gateway API v1.6.1):
// a mirrored request is seen in the mirror backend's echo log ("Echoing back request made to <path> to client"),
// read from the pods labelled app=<backend> since MaxTimeToConsistency before the check started (upstream widens the
// window so a mirror logged before the primary response returns is not missed), polled every second for
// RequestTimeout; and AddRequestIDQueryParam, the unique query parameter that ties a log line to one test case.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Kube } from '../../lab/toolkit/kube.ts';
import type { TimeoutConfig } from './config.ts';
import type { ExpectedResponse } from './http.ts';

export interface MirroredBackend {
  name: string;
  namespace: string;
}

const REQUEST_ID_QUERY_PARAM = 'gateway-api-conformance-request-id';

/** Go's url.Values.Encode: keys sorted, each value query-escaped. */
function addQueryParam(raw: string, name: string, value: string): string {
  const u = new URL(raw, 'http://x');
  u.searchParams.set(name, value);
  u.searchParams.sort();
  return `${u.pathname}?${u.searchParams.toString()}`;
}

/** Upstream's ExpectedResponse.AddRequestIDQueryParam, returning a copy. */
export function withRequestId(e: ExpectedResponse, id: string): ExpectedResponse {
  const path = addQueryParam(e.request.path ?? '/', REQUEST_ID_QUERY_PARAM, id);
  const out: ExpectedResponse = { ...e, request: { ...e.request, path } };
  if (e.expectedRequest) {
    const ep = e.expectedRequest.path ? addQueryParam(e.expectedRequest.path, REQUEST_ID_QUERY_PARAM, id) : path;
    out.expectedRequest = { ...e.expectedRequest, path: ep };
  }
  return out;
}

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Upstream's GetMirrorLogRegexp. */
export const mirrorLogRegexp = (path: string): RegExp =>
  new RegExp(`Echoing back request made to ${escapeRe(path)} to client`);

/** Upstream's DumpEchoLogs: the lines of every not-failed pod labelled app=<name>, container <name>, since `since`. */
export async function dumpEchoLogs(kube: Kube, ns: string, name: string, since: number): Promise<string[]> {
  const pods = (await kube.core.listNamespacedPod({ namespace: ns, labelSelector: `app=${name}` })).items;
  // client-node's readNamespacedPodLog has no sinceTime: sinceSeconds, rounded up, as wide a window.
  const sinceSeconds = Math.max(1, Math.ceil((Date.now() - since) / 1000));
  const lines: string[] = [];
  for (const pod of pods) {
    if (pod.status?.phase === 'Failed') continue;
    try {
      const body = await kube.core.readNamespacedPodLog({
        name: pod.metadata!.name!,
        namespace: ns,
        container: name,
        sinceSeconds,
      });
      lines.push(...String(body ?? '').split('\n'));
    } catch {
      // upstream skips a pod whose logs cannot be read
    }
  }
  return lines;
}

/**
 * Upstream's ExpectMirroredRequest: starts watching each mirror backend's logs (resolves once each has been read
 * once) and returns the wait for all of them; the wait rejects naming the backends whose logs never showed the path.
 */
export async function expectMirroredRequest(
  kube: Kube,
  tc: TimeoutConfig,
  mirrors: MirroredBackend[],
  path: string,
): Promise<() => Promise<void>> {
  const re = mirrorLogRegexp(path);
  const since = Date.now() - tc.maxTimeToConsistency;
  const started: Promise<void>[] = [];
  const results = mirrors.map((m) => {
    let markStarted: () => void = () => {};
    started.push(new Promise<void>((r) => (markStarted = r)));
    return (async () => {
      const deadline = Date.now() + tc.requestTimeout;
      try {
        for (;;) {
          try {
            const logs = await dumpEchoLogs(kube, m.namespace, m.name, since);
            markStarted();
            if (logs.some((l) => re.test(l))) return undefined;
          } catch {
            // couldn't read the logs; try again
          }
          if (Date.now() >= deadline) return `Couldn't find mirrored request in "${m.namespace}/${m.name}" logs`;
          await sleep(1000);
        }
      } finally {
        markStarted();
      }
    })();
  });
  await Promise.all(started);
  return async () => {
    const misses = (await Promise.all(results)).filter((r): r is string => !!r);
    if (misses.length) throw new Error(misses.join('; '));
  };
}
