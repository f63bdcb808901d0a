// The lab process itself (lab/embedded/main.ts), started as lab:up starts it: its options reach the kubelet and the
// LoadBalancer controller. GWLAB_CRASH_BACKOFF (what lab:up's environment carries; --crash-backoff is the flag) sets
// the CrashLoopBackOff schedule, which must double from the initial back-off up to the max; --lb-delay-ms sets how
// long a new LoadBalancer Service waits for its address.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KubeConfig, Watch } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KUBECTL } from './apiserver/testing/test-lab.ts';
import { BACKOFF_ENV, parseBackoff, parseDelayMs } from './cluster.ts';
import { killTaggedProcesses } from './node/runtime/orphans.ts';
import { eventually } from './node/testing/testbed.ts';

const MAIN = join(dirname(fileURLToPath(import.meta.url)), 'main.ts');
// Small enough to see the cap within seconds: the restarts wait 0, 250 ms, 500 ms, 1 s, 2 s, ... A kubelet forgets
// the back-off of a container that ran longer than twice the max, and a crashing Node process on a loaded 2-core
// machine (load 26) took over 2 s to start and exit: a 1 s max reset the schedule mid-test.
const BACKOFF = { initialSeconds: 0.25, maxSeconds: 2 };
const LB_DELAY_MS = 1500;

// Appends its start time to /data/starts (a hostPath folder of the test), then fails.
const CRASH = 'require("node:fs").appendFileSync("/data/starts", Date.now() + "\\n"); process.exit(1)';

describe('the lab process (main.ts) with its back-off and LoadBalancer delay options', () => {
  const name = `proc-${randomBytes(3).toString('hex')}`;
  let home: string;
  let data: string;
  let child: ChildProcess | undefined;
  let kubeconfig: string;
  let stderr = '';
  const watches: AbortController[] = [];
  /** Every version of the crasher pod and of the LoadBalancer Service, with the time it was seen. */
  const podSeen: { at: number; restartCount: number; waiting?: any }[] = [];
  const svcSeen: { at: number; ip?: string }[] = [];
  let created = 0;

  const k = (args: string[], input?: string) =>
    new Promise<string>((resolve, reject) => {
      const p = spawn(KUBECTL, [`--kubeconfig=${kubeconfig}`, ...args], { env: { ...process.env, KUBECONFIG: '' } });
      let out = '';
      let err = '';
      p.stdout.on('data', (d) => (out += d));
      p.stderr.on('data', (d) => (err += d));
      p.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`kubectl ${args.join(' ')}: ${err}`))));
      p.stdin.end(input ?? '');
    });

  beforeAll(async () => {
    home = mkdtempSync(join(tmpdir(), 'gwlab-lab-process-'));
    data = join(home, 'data');
    mkdirSync(data);
    writeFileSync(
      join(home, 'images.yaml'),
      `images:\n  "gwlab.test/crash:1": ${JSON.stringify(['node', '-e', CRASH])}\n`,
    );
    child = spawn(process.execPath, [MAIN, '--name', name, '--home', home, '--lb-delay-ms', String(LB_DELAY_MS)], {
      env: { ...process.env, [BACKOFF_ENV]: `${BACKOFF.initialSeconds}:${BACKOFF.maxSeconds}` },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stderr!.on('data', (d) => (stderr += d));
    kubeconfig = await new Promise<string>((resolve, reject) => {
      let out = '';
      child!.stdout!.on('data', (d) => {
        out += d;
        const m = /\{"ready":true.*\}/.exec(out);
        if (m) resolve(JSON.parse(m[0]).kubeconfig);
      });
      child!.once('exit', (code) => reject(new Error(`lab process exited ${code}: ${out}${stderr}`)));
    });
    const kc = new KubeConfig();
    kc.loadFromFile(kubeconfig);
    const watch = new Watch(kc);
    const onError = (err: unknown) => {
      if (err) stderr += `watch ended: ${err}\n`;
    };
    watches.push(
      await watch.watch(
        '/api/v1/namespaces/default/pods',
        { fieldSelector: 'metadata.name=crasher' },
        (_type, p: any) => {
          const s = p.status?.containerStatuses?.[0];
          if (s) podSeen.push({ at: Date.now(), restartCount: s.restartCount, waiting: s.state?.waiting });
        },
        onError,
      ),
      await watch.watch(
        '/api/v1/namespaces/default/services',
        { fieldSelector: 'metadata.name=lb' },
        (_type, s: any) => svcSeen.push({ at: Date.now(), ip: s.status?.loadBalancer?.ingress?.[0]?.ip }),
        onError,
      ),
    );
    created = Date.now();
    await k(
      ['apply', '-f', '-'],
      `apiVersion: v1
kind: Pod
metadata: {name: crasher, namespace: default}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: crash
    image: gwlab.test/crash:1
    volumeMounts: [{name: data, mountPath: /data}]
  volumes: [{name: data, hostPath: {path: ${data}, type: Directory}}]
---
apiVersion: v1
kind: Service
metadata: {name: lb, namespace: default}
spec:
  type: LoadBalancer
  ports: [{port: 8080}]
`,
    );
  }, 60_000);

  afterAll(async () => {
    for (const w of watches) w.abort();
    if (child && child.exitCode === null) {
      const exited = new Promise((r) => child!.once('exit', r));
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 15_000))]);
      if (child.exitCode === null) child.kill('SIGKILL');
    }
    await killTaggedProcesses({ lab: name });
    if (home) rmSync(home, { recursive: true, force: true });
  });

  it('doubles the CrashLoopBackOff from the configured initial back-off up to the configured max', async () => {
    const starts = () => readFileSync(join(data, 'starts'), 'utf8').trim().split('\n').map(Number);
    // Six starts: five restarts, the last at the cap. (The default 1 s → 20 s schedule would need 15 s.)
    await eventually(() => starts().length >= 6, 20_000, 50).catch((err) => {
      const seen = podSeen.map((x) => `+${x.at - created}ms restarts=${x.restartCount} ${x.waiting?.message ?? ''}`);
      throw new Error(`${err}\npod states:\n${seen.join('\n')}\nlab stderr: ${stderr}`);
    });
    const t = starts();
    const waits = [0, 1, 2, 3, 4].map((i) => t[i + 1] - t[i]);
    const expected = [0, 0.25, 0.5, 1, 2].map((s) => s * 1000);
    // Each restart came no earlier than its back-off (its start also includes a process start, hence no upper bound
    // per restart; the exact schedule is in the messages below).
    for (let i = 0; i < waits.length; i++) expect(waits[i]).toBeGreaterThanOrEqual(expected[i] - 5);
    // The back-off the kubelet applied, as kubelet words it, by the restart count it was waiting to leave.
    const messages = new Map<number, string>();
    for (const s of podSeen) {
      if (s.waiting?.reason === 'CrashLoopBackOff') messages.set(s.restartCount, s.waiting.message.split(' ')[1]);
    }
    expect([1, 2, 3, 4].map((n) => messages.get(n))).toEqual(['250ms', '500ms', '1s', '2s']);
    expect(messages.has(0)).toBe(false); // the first restart is immediate
  });

  it('gives a LoadBalancer Service its address only after --lb-delay-ms', async () => {
    const first = (await eventually(() => svcSeen.find((s) => s.ip), 10_000, 50))!;
    expect(first.ip).toMatch(/^127\.\d+\.\d+\.\d+$/);
    // Seen without an address first; the address came no earlier than the delay after the Service was created.
    expect(svcSeen[0].ip).toBeUndefined();
    expect(first.at - created).toBeGreaterThanOrEqual(LB_DELAY_MS);
    // No upper bound finer than the wait above: on a loaded 2-core machine the controller's timer and the watch event
    // behind `first.at` lag by seconds (4.7 s seen at load 8); that the address comes at all is what the wait checks.
    const events = JSON.parse(
      await k(['get', 'events', '--field-selector', 'involvedObject.name=lb', '-o', 'json']),
    ).items.map((e: any) => e.reason);
    expect(events).toEqual(expect.arrayContaining(['EnsuringLoadBalancer', 'EnsuredLoadBalancer']));
  });

  it('parses the option values, refusing what would misconfigure the lab', () => {
    expect(parseBackoff('0.25:2')).toEqual(BACKOFF);
    expect(parseBackoff(' 10 : 300 ')).toEqual({ initialSeconds: 10, maxSeconds: 300 });
    expect(() => parseBackoff('1:0.5')).toThrow('max back-off (0.5 s) must be >= initial back-off (1 s)');
    expect(() => parseBackoff('0:1')).toThrow('initial back-off must be > 0 s');
    expect(() => parseBackoff('1s:20s')).toThrow('is not <initial>:<max> in seconds');
    expect(parseDelayMs('1500')).toBe(1500);
    expect(() => parseDelayMs('1.5s')).toThrow('is not a whole number of milliseconds');
  });
});
