// Logs since a mark: the pure parts (timestamps, the mark, the lines after it when lines share a millisecond), then
// against an embedded test cluster with a real pod: only lines after the mark, across a container restart (the
// previous instance's tail), and across the pod being replaced (the gone pod's lines as last read, the new pod's lines).
// The same cluster checks describe.ts on a container that exited with an error.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestCluster, type TestCluster } from '../embedded/testing/test-cluster.ts';
import { describePods, eventsFor, formatPodSummary, notReadyReasons } from './describe.ts';
import { Kube } from './kube.ts';
import { advanceMark, afterMark, markLogs, markOf, parseTimestamped, type TimedLine, timeMs } from './logs.ts';
import { type PortForward, portForward } from './portforward.ts';
import { waitFor } from './wait.ts';

describe('logs since a mark: parsing and marks', () => {
  it('reads RFC 3339 times with any number of fractional digits', () => {
    expect(timeMs('2026-11-22T10:00:00.123456789Z')).toBe(Date.parse('2026-11-22T10:00:00.123Z'));
    expect(timeMs('2026-11-22T10:00:00.5Z')).toBe(Date.parse('2026-11-22T10:00:00.500Z'));
    expect(timeMs('2026-11-22T10:00:00Z')).toBe(Date.parse('2026-11-22T10:00:00.000Z'));
    expect(timeMs('2026-11-22T12:00:00.1+02:00')).toBe(Date.parse('2026-11-22T10:00:00.100Z'));
    expect(timeMs('not a time')).toBeNaN();
  });

  it('parses `--timestamps` output, keeping the text after the first space as is', () => {
    const lines = parseTimestamped(
      '2026-11-22T10:00:00.001000001Z first line\n2026-11-22T10:00:00.002Z  indented [x]\n\ngarbage\n',
    );
    expect(lines.map((l) => l.text)).toEqual(['first line', ' indented [x]']);
    expect(lines[0].time).toBe('2026-11-22T10:00:00.001000001Z');
  });

  const at = (ms: number, text: string): TimedLine => ({ ms, time: String(ms), text });

  it('skips the lines of the mark’s millisecond that were there at the mark, and keeps later ones', () => {
    // The embedded node's sub-millisecond digits are not monotonic: only the millisecond is compared.
    const atMark = [at(1, 'old'), at(5, 'a'), at(5, 'b')];
    const mark = markOf(atMark, 0);
    expect(mark).toEqual({ lastMs: 5, ties: 2, restartCount: 0 });
    const now = [...atMark, at(5, 'c'), at(6, 'd')];
    expect(afterMark(mark, [now]).map((l) => l.text)).toEqual(['c', 'd']);
  });

  it('an empty log at the mark means every later line counts; no mark (a new pod) means everything', () => {
    const mark = markOf([], 0);
    expect(afterMark(mark, [[at(1, 'x')]]).map((l) => l.text)).toEqual(['x']);
    expect(afterMark(undefined, [[at(1, 'p')], [at(2, 'q')]]).map((l) => l.text)).toEqual(['p', 'q']);
  });

  it('advances the mark to the current instance, or keeps the newest line seen while it has logged nothing', () => {
    expect(advanceMark(markOf([at(1, 'a')], 0), undefined, [at(1, 'a'), at(2, 'b'), at(2, 'c')], 0)).toEqual({
      lastMs: 2,
      ties: 2,
      restartCount: 0,
    });
    expect(advanceMark(markOf([at(1, 'a')], 0), [at(1, 'a'), at(4, 'crash')], [], 1)).toEqual({
      lastMs: 4,
      ties: 0,
      restartCount: 1,
    });
    expect(advanceMark(undefined, undefined, [], 0)).toEqual({
      lastMs: Number.NEGATIVE_INFINITY,
      ties: 0,
      restartCount: 0,
    });
  });

  it('across a restart: the previous instance after the mark, then the whole current one', () => {
    const mark = markOf([at(1, 'before'), at(3, 'at mark')], 0);
    const previous = [at(1, 'before'), at(3, 'at mark'), at(4, 'after, then crashed')];
    const current = [at(9, 'started again')];
    expect(afterMark(mark, [previous, current]).map((l) => l.text)).toEqual(['after, then crashed', 'started again']);
  });
});

// A container that logs what it is asked to, and exits with code 3 on /exit (so the kubelet restarts it).
const LOGGER = `
const http = require('node:http');
const os = require('node:os');
http.createServer((req, res) => {
  const u = new URL(req.url, 'http://x');
  if (u.pathname === '/exit') { console.log('exiting'); res.end('bye'); setTimeout(() => process.exit(3), 20); return; }
  console.log(u.searchParams.get('msg'));
  res.end('ok');
}).listen(8080, '0.0.0.0', () => console.log('started ' + os.hostname()));
process.on('SIGTERM', () => process.exit(0));
`;

describe('logs since a mark and describe, on a real pod', () => {
  let c: TestCluster;
  let kube: Kube;
  const fwds: PortForward[] = [];

  const call = async (path: string) => {
    const pod = await waitFor('a ready logger pod', async () => {
      const pods = await kube.list('v1', 'Pod', 'lg', 'app=logger');
      const p = pods.find(
        (x) =>
          !x.metadata?.deletionTimestamp &&
          x.status?.conditions?.some((k: any) => k.type === 'Ready' && k.status === 'True'),
      );
      return { ok: !!p, value: p?.metadata?.name as string };
    });
    let f = fwds.find((x) => x.pod === pod);
    if (!f) {
      f = await portForward(kube.kc, { namespace: 'lg', pod, port: 8080 });
      fwds.push(f);
    }
    const url = f.url + path;
    return waitFor(`GET ${path} on ${pod}`, async () => {
      const r = await fetch(url, { signal: AbortSignal.timeout(2000) });
      return { ok: r.status === 200, value: await r.text() };
    });
  };

  beforeAll(async () => {
    c = await startTestCluster({ images: { 'gwlab.test/logger:1': ['node', '-e', LOGGER] } });
    kube = new Kube(await c.lab.server.kubeConfig());
    await c.k(
      ['apply', '-f', '-'],
      `apiVersion: v1
kind: Namespace
metadata: {name: lg}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: logger, namespace: lg}
spec:
  replicas: 1
  selector: {matchLabels: {app: logger}}
  template:
    metadata: {labels: {app: logger}}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: app
        image: gwlab.test/logger:1
        readinessProbe: {tcpSocket: {port: 8080}, periodSeconds: 1}
`,
    );
    await c.k(['rollout', 'status', 'deployment/logger', '-n', 'lg', '--timeout=60s']);
  }, 90_000);

  afterAll(async () => {
    for (const f of fwds) await f.close();
    await c?.stop();
  });

  it('returns only the lines after the mark, across a restart and a replaced pod, without repeats', async () => {
    await call('/?msg=before-mark');
    const mark = await markLogs(kube, { namespace: 'lg', labelSelector: 'app=logger' });
    expect(await mark.since()).toEqual([]);
    await call('/?msg=one');
    await mark.waitFor('line one', /^one$/);
    expect(await mark.since()).toEqual(['one']);

    // The container exits (code 3) and the kubelet starts it again: the old instance's tail comes from --previous.
    const [first] = await kube.list('v1', 'Pod', 'lg', 'app=logger');
    await call('/exit');
    await waitFor('the logger container restarted and ready', async () => {
      const p = await kube.get('v1', 'Pod', first.metadata!.name!, 'lg');
      const st = p?.status?.containerStatuses?.[0];
      return { ok: st?.restartCount === 1 && st.ready === true, seen: st };
    });
    await call('/?msg=two');
    const afterRestart = await mark.waitFor('line two', /^two$/);
    expect(afterRestart).toEqual(['one', 'exiting', `started ${first.metadata!.name}`, 'two']);

    // describe: the restarted container says how its previous instance ended, with the kubelet's events.
    const [summary] = await describePods(kube, { namespace: 'lg', pod: first.metadata!.name! });
    expect(summary.containers[0]).toMatchObject({
      name: 'app',
      state: 'running',
      restartCount: 1,
      lastTerminated: { reason: 'Error', exitCode: 3 },
    });
    expect(summary.events.map((e) => e.reason)).toEqual(expect.arrayContaining(['Created', 'Started']));
    expect(formatPodSummary(summary)).toMatch(/last state: terminated Error exit code 3/);

    // The pod is replaced: its lines as last read stay, and the new pod's lines follow.
    await c.k(['delete', 'pod', first.metadata!.name!, '-n', 'lg', '--wait=true']);
    await call('/?msg=three');
    const all = await mark.waitFor('line three', /^three$/);
    expect(all.slice(0, 4)).toEqual(['one', 'exiting', `started ${first.metadata!.name}`, 'two']);
    expect(all.slice(4)).toEqual([expect.stringMatching(/^started logger-/), 'three']);
    expect(all.filter((l) => l === 'before-mark')).toEqual([]);

    // A mark on one pod by name follows just that pod.
    const [second] = (await kube.list('v1', 'Pod', 'lg', 'app=logger')).filter((p) => !p.metadata?.deletionTimestamp);
    const one = await markLogs(kube, { namespace: 'lg', pod: second.metadata!.name!, container: 'app' });
    await call('/?msg=four');
    expect(await one.waitFor('line four', /^four$/)).toEqual(['four']);
  });

  it('describes a container that exits with an error: waiting in CrashLoopBackOff with the back-off event', async () => {
    await c.k(
      ['apply', '-f', '-'],
      `apiVersion: v1
kind: Pod
metadata: {name: crasher, namespace: lg}
spec:
  containers:
  - name: app
    image: gwlab.test/logger:1
    command: [node, -e, "console.error('boom'); process.exit(7)"]
`,
    );
    const summary = await waitFor('crasher in CrashLoopBackOff', async () => {
      const [s] = await describePods(kube, { namespace: 'lg', pod: 'crasher' });
      return { ok: s?.containers[0]?.reason === 'CrashLoopBackOff', value: s, seen: s?.containers };
    });
    expect(summary.ready).toBe(false);
    expect(summary.containers[0].lastTerminated).toMatchObject({ reason: 'Error', exitCode: 7 });
    const reasons = notReadyReasons(summary);
    expect(reasons[0]).toMatch(/^container app waiting \(CrashLoopBackOff\): back-off .* restarting failed container/);
    expect(reasons[0]).toMatch(/last terminated Error exit code 7$/);
    const events = await waitFor('a BackOff event', async () => {
      const ev = await eventsFor(kube, { kind: 'Pod', name: 'crasher', namespace: 'lg' });
      return { ok: ev.some((e) => e.reason === 'BackOff'), value: ev, seen: ev };
    });
    expect(events.find((e) => e.reason === 'BackOff')).toMatchObject({ type: 'Warning', object: 'Pod/crasher' });
    expect(await describePods(kube, { namespace: 'lg', pod: 'nope' })).toEqual([]);
  });
});
