// bench:lab's change → effect: how long after a change is written to the API server traffic through the Gateway shows
// it — the delay a user feels between `kubectl apply` and the gateway doing what they asked (informers → translation
// → xDS push → the proxy's new config). Four kinds of change, interleaved (so a busy spell of the shared machine
// weighs on all alike), each timed from just before its write to the first response that shows it:
//   - routeEdit: an HTTPRoute's RequestHeaderModifier sets `x-effect` to a new value → `/headers` echoes it;
//   - policyEdit: a TrafficPolicy's response header `x-policy` gets a new value → the response carries it;
//   - referenceGrantCreated: a route's cross-namespace backend is refused (500) until a ReferenceGrant allows it →
//     200 (the grant is deleted again, and the 500 waited for, between two measured creations);
//   - selectorRelabel: a Service's selector moves between the pods of two Deployments → `/hostname` names a pod of
//     the other one (endpoints → EDS).
// Writes go through lab/toolkit's Kube (server-side apply, as the scenarios make them); traffic is polled every
// POLL_MS with a new connection per request (lab/toolkit/http.ts), so a figure is at most POLL_MS plus one request late.
import { setTimeout as sleep } from 'node:timers/promises';
import { readManifest } from '../../lab/install.ts';
import { type HttpResponse, send } from '../../lab/toolkit/http.ts';
import type { KObj, Kube } from '../../lab/toolkit/kube.ts';
import { nearestRank } from '../shared/stats.ts';

export const CHANGE_KINDS = ['routeEdit', 'policyEdit', 'referenceGrantCreated', 'selectorRelabel'] as const;
export type ChangeKind = (typeof CHANGE_KINDS)[number];

/** Issue 14's target. */
export const TARGET_P99_MS = 250;
const NS = 'sampleapp';
const GRANT_NS = 'effect-grant';
const POLL_MS = 5;
const EFFECT_TIMEOUT_MS = 15_000;
const HOSTS: Record<ChangeKind, string> = {
  routeEdit: 'route.effect.bench',
  policyEdit: 'policy.effect.bench',
  referenceGrantCreated: 'grant.effect.bench',
  selectorRelabel: 'selector.effect.bench',
};

/** HTTPRoute `name` in the bench's namespace, attached to `gateway`, for `host` to `backend`. */
function route(gateway: string, name: string, host: string, backend: Record<string, unknown>, filters?: unknown[]) {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'HTTPRoute',
    metadata: { name, namespace: NS },
    spec: {
      parentRefs: [{ name: gateway }],
      hostnames: [host],
      rules: [{ backendRefs: [{ ...backend, port: 8000 }], ...(filters ? { filters } : {}) }],
    },
  };
}

const headerFilter = (value: string) => [
  { type: 'RequestHeaderModifier', requestHeaderModifier: { set: [{ name: 'x-effect', value }] } },
];

const policy = (value: string): KObj => ({
  apiVersion: 'gateway.gwvendor.dev/v1alpha1',
  kind: 'TrafficPolicy',
  metadata: { name: 'effect-policy', namespace: NS },
  spec: {
    targetRefs: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: 'effect-policy' }],
    headerModifiers: { response: { set: [{ name: 'x-policy', value }] } },
  },
});

const grant: KObj = {
  apiVersion: 'gateway.networking.k8s.io/v1beta1',
  kind: 'ReferenceGrant',
  metadata: { name: 'effect-grant', namespace: GRANT_NS },
  spec: {
    from: [{ group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', namespace: NS }],
    to: [{ group: '', kind: 'Service' }],
  },
};

const selectorService = (slot: string): KObj => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name: 'effect-selector', namespace: NS },
  spec: { selector: { 'effect-slot': slot }, ports: [{ name: 'http', port: 8000, targetPort: 8080 }] },
});

/** The sample application's manifests in `namespace`; with `slot`, its Deployment renamed effect-<slot> and labelled. */
function sampleApp(namespace: string, slot?: string): KObj[] {
  return readManifest('sampleapp.yaml')
    .filter((d) => d.kind !== 'Namespace' && (!slot || d.kind === 'Deployment'))
    .map((d) => {
      const o = structuredClone({ ...d, metadata: { ...d.metadata, namespace } });
      if (slot && o.kind === 'Deployment') {
        const labels = { app: `effect-${slot}`, 'effect-slot': slot };
        o.metadata.name = `effect-${slot}`;
        o.spec.selector.matchLabels = { app: labels.app };
        o.spec.template.metadata.labels = labels;
      }
      return o;
    });
}

/** Polls `host` through the Gateway until `shows` holds; ms from `t0`. */
async function effectAfter(
  url: string,
  host: string,
  path: string,
  t0: number,
  shows: (r: HttpResponse) => boolean,
): Promise<number> {
  let seen = 'no response';
  while (performance.now() - t0 < EFFECT_TIMEOUT_MS) {
    try {
      const r = await send({ url, path, host, timeoutMs: 2_000 });
      if (shows(r)) return performance.now() - t0;
      seen = `${r.status} ${r.body.slice(0, 120)}`;
    } catch (err) {
      seen = (err as Error).message;
    }
    await sleep(POLL_MS);
  }
  throw new Error(`no effect for ${host}${path} within ${EFFECT_TIMEOUT_MS} ms; last seen: ${seen}`);
}

/** The objects the four kinds of change work on, applied and serving before the first measured change. */
async function setUp(kube: Kube, gateway: string, url: string): Promise<void> {
  await kube.apply([
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: GRANT_NS } },
    ...sampleApp(GRANT_NS),
    ...sampleApp(NS, 'a'),
    ...sampleApp(NS, 'b'),
    selectorService('a'),
    route(gateway, 'effect-route', HOSTS.routeEdit, { name: 'sampleapp' }, headerFilter('start')),
    route(gateway, 'effect-policy', HOSTS.policyEdit, { name: 'sampleapp' }),
    policy('start'),
    route(gateway, 'effect-grant', HOSTS.referenceGrantCreated, { name: 'sampleapp', namespace: GRANT_NS }),
    route(gateway, 'effect-selector', HOSTS.selectorRelabel, { name: 'effect-selector' }),
  ]);
  for (const [name, ns] of [
    ['sampleapp', GRANT_NS],
    ['effect-a', NS],
    ['effect-b', NS],
  ])
    await kube.waitForRollout(name!, ns!, { timeoutMs: 120_000 });
  const t0 = performance.now();
  await effectAfter(url, HOSTS.routeEdit, '/headers', t0, (r) => r.status === 200);
  await effectAfter(url, HOSTS.policyEdit, '/get', t0, (r) => r.headers['x-policy'] === 'start');
  await effectAfter(url, HOSTS.referenceGrantCreated, '/get', t0, (r) => r.status === 500);
  await effectAfter(url, HOSTS.selectorRelabel, '/hostname', t0, (r) => !!r.json?.hostname?.startsWith('effect-a-'));
}

/** What one change of `kind` (the `i`th) writes, where traffic shows it, and what undoes it for the next one. */
function plan(kube: Kube, gateway: string, kind: ChangeKind, i: number) {
  const value = `v${i}-${Date.now()}`;
  const host = HOSTS[kind];
  if (kind === 'routeEdit') {
    return {
      write: () => kube.apply(route(gateway, 'effect-route', host, { name: 'sampleapp' }, headerFilter(value))),
      path: '/headers',
      shows: (r: HttpResponse) => r.json?.headers?.['X-Effect']?.[0] === value,
    };
  }
  if (kind === 'policyEdit') {
    return {
      write: () => kube.apply(policy(value)),
      path: '/get',
      shows: (r: HttpResponse) => r.headers['x-policy'] === value,
    };
  }
  if (kind === 'referenceGrantCreated') {
    return {
      write: () => kube.apply(grant),
      path: '/get',
      shows: (r: HttpResponse) => r.status === 200,
      undo: { write: () => kube.delete(grant), shows: (r: HttpResponse) => r.status === 500 },
    };
  }
  const slot = i % 2 === 0 ? 'a' : 'b'; // the setup serves a; the unmeasured change (i = -1) moves it to b
  return {
    write: () => kube.apply(selectorService(slot)),
    path: '/hostname',
    shows: (r: HttpResponse) => !!r.json?.hostname?.startsWith(`effect-${slot}-`),
  };
}

/** One change, timed from just before its write: to the write's answer (writeMs) and to its effect in traffic (ms). */
async function change(kube: Kube, gateway: string, url: string, kind: ChangeKind, i: number) {
  const p = plan(kube, gateway, kind, i);
  const t0 = performance.now();
  await p.write();
  const writeMs = performance.now() - t0;
  const ms = await effectAfter(url, HOSTS[kind], p.path, t0, p.shows);
  if (p.undo) {
    const t1 = performance.now();
    await p.undo.write();
    await effectAfter(url, HOSTS[kind], p.path, t1, p.undo.shows);
  }
  return { ms, writeMs };
}

export type Timings = Record<ChangeKind, { ms: number[]; writeMs: number[] }>;

/**
 * p50 and p99 (nearest rank, as the rest of bench:lab) of each kind, and the p50 of its write's own round trip (the
 * part of the figure the API server's answer takes), for lab.json; and the rows of lab.md.
 */
export function changeEffectReport(t: Timings) {
  const r = (xs: number[], p: number) => Math.round(nearestRank(xs, p));
  const json = {
    ...Object.fromEntries(
      CHANGE_KINDS.map((k) => [
        k,
        { changes: t[k].ms.length, p50: r(t[k].ms, 50), p99: r(t[k].ms, 99), writeP50: r(t[k].writeMs, 50) },
      ]),
    ),
    targets: { p99: TARGET_P99_MS },
  } as Record<ChangeKind, { changes: number; p50: number; p99: number; writeP50: number }> & {
    targets: { p99: number };
  };
  const rows = CHANGE_KINDS.map((k) => {
    const { changes, p50, p99, writeP50 } = json[k];
    return `| change → effect in traffic: ${k}, p50 / p99 of ${changes} (the write itself: p50 ${writeP50} ms) | ${p50} / ${p99} ms | p99 < ${TARGET_P99_MS} ms | ${p99 < TARGET_P99_MS ? 'met' : 'MISSED'} |`;
  });
  return { json, rows };
}

/**
 * `changes` changes of each kind against Gateway `gateway` (namespace sampleapp, HTTP on `url`), after one unmeasured
 * change of each; the timings of each kind. Progress goes to `log`.
 */
export async function changeToEffect(
  kube: Kube,
  gateway: string,
  url: string,
  changes: number,
  log: (line: string) => void,
): Promise<Timings> {
  await setUp(kube, gateway, url);
  const out = Object.fromEntries(CHANGE_KINDS.map((k) => [k, { ms: [], writeMs: [] }])) as unknown as Timings;
  for (let i = -1; i < changes; i++) {
    for (const kind of CHANGE_KINDS) {
      const { ms, writeMs } = await change(kube, gateway, url, kind, i);
      if (i < 0) continue;
      out[kind].ms.push(ms);
      out[kind].writeMs.push(writeMs);
    }
    if (i >= 0 && ((i + 1) % 10 === 0 || i + 1 === changes)) log(`change → effect: ${i + 1}/${changes} of each kind`);
  }
  const { json } = changeEffectReport(out);
  log(`change → effect p50/p99 ms: ${CHANGE_KINDS.map((k) => `${k} ${json[k].p50}/${json[k].p99}`).join(', ')}`);
  return out;
}
