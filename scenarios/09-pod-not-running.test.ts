// Contract section 7, "a pod is not running → describe the pod": a GatewayParameters whose proxy image does not exist.
// The proxy pod cannot start; `kubectl describe` shows ImagePullBackOff and the pull events, `kubectl get events`
// lists them, and the Gateway is not Programmed (it waits for a ready proxy). Removing the bad image override rolls
// the proxy onto the real image and the Gateway becomes Programmed. As in Kubernetes, the pod alternates ErrImagePull
// (a pull just failed) and ImagePullBackOff (waiting to retry): a look at one moment may see either, so the tests
// accept both there and wait for the back-off, the state the pod settles in.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GATEWAY_NAME_LABEL } from '../lab/toolkit/admin.ts';
import { waitFor } from '../lab/toolkit/wait.ts';
import { artifactNamespaces, collectSuiteFailure } from './support/artifacts.ts';
import { uniqueName, useLab } from './support/lab.ts';
import { explainJson } from './support/tools.ts';

const GW_API = 'gateway.networking.k8s.io/v1';
const lab = useLab();
const ns = uniqueName('s09-pull');
const BAD_IMAGE = 'gwlab.local/does-not-exist:0.0.0';
// The contract reads gateway pods by this label (section 4.3).
const POD_LABEL = 'app.orch.io/name=gw';
artifactNamespaces(ns);

const parameters = (image: string) => `
apiVersion: gateway.gwvendor.dev/v1alpha1
kind: GatewayParameters
metadata: {name: gw, namespace: ${ns}}
spec:
  kube:
    envoyContainer:
      ${image}
`;

describe('pod not running: a GatewayParameters image that does not exist', () => {
  let pod: string;

  beforeAll(async () => {
    await lab.kube.apply(`
apiVersion: v1
kind: Namespace
metadata: {name: ${ns}}
---
${parameters('image: {registry: gwlab.local, repository: does-not-exist, tag: "0.0.0"}')}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw, namespace: ${ns}}
spec:
  gatewayClassName: gwvendor
  infrastructure:
    parametersRef: {name: gw, group: gateway.gwvendor.dev, kind: GatewayParameters}
  listeners: [{name: http, protocol: HTTP, port: 8080, allowedRoutes: {namespaces: {from: All}}}]
`);
  });

  // biome-ignore lint/correctness/noEmptyPattern: vitest passes the suite second; the first argument must be a pattern.
  afterAll(async ({}, suite) => {
    await collectSuiteFailure(suite);
    if (process.env.KEEP !== '1') await lab.k(['delete', 'namespace', ns, '--wait=false']).catch(() => undefined);
  });

  it('the proxy pod carries the image and waits in ImagePullBackOff', async () => {
    pod = await waitFor(
      `a proxy pod (${POD_LABEL}) in ImagePullBackOff`,
      async () => {
        const pods = await lab.kube.list('v1', 'Pod', ns, POD_LABEL);
        const p = pods.find((x) =>
          (x.status?.containerStatuses ?? []).some((c: any) => c.state?.waiting?.reason === 'ImagePullBackOff'),
        );
        return {
          ok: !!p,
          value: p?.metadata?.name as string,
          seen: pods.map((x) => ({ name: x.metadata?.name, phase: x.status?.phase, c: x.status?.containerStatuses })),
        };
      },
      { timeoutMs: 60_000 },
    );
    const p = await lab.kube.get('v1', 'Pod', pod, ns);
    expect(p!.spec.containers[0].image).toBe(BAD_IMAGE);
    expect(p!.status.phase).toBe('Pending');
    expect(p!.metadata?.labels?.[GATEWAY_NAME_LABEL]).toBe('gw');
  });

  it('kubectl describe shows ImagePullBackOff and the pull events', async () => {
    // The state alternates (ErrImagePull, ImagePullBackOff) and events are written apart from the pod's status (best
    // effort, as in Kubernetes): wait for a describe that shows the back-off state and the events of both steps.
    const pulled = (out: string) => {
      const events = out.slice(out.indexOf('Events:'));
      return [/Failed\s+.*Error: ErrImagePull/, /BackOff\s+.*Back-off pulling image/, /Error: ImagePullBackOff/].every(
        (re) => re.test(events),
      );
    };
    const out = await waitFor(`kubectl describe pod ${pod} to show ImagePullBackOff and the pull events`, async () => {
      const r = await lab.kubectl(['describe', 'pod', '-n', ns, '-l', POD_LABEL]);
      const ok = r.code === 0 && /Reason:\s+ImagePullBackOff/.test(r.stdout) && pulled(r.stdout);
      return { ok, value: r.stdout, seen: r };
    });
    expect(out).toMatch(/Image:\s+gwlab\.local\/does-not-exist:0\.0\.0$/m);
    const events = out.slice(out.indexOf('Events:'));
    expect(events).toMatch(/Failed\s+.*Error: ErrImagePull/);
    expect(events).toMatch(/BackOff\s+.*Back-off pulling image "gwlab\.local\/does-not-exist:0\.0\.0"/);
    const ev = await lab.k([
      'get',
      'events',
      '-n',
      ns,
      '--field-selector',
      `involvedObject.kind=Pod,involvedObject.name=${pod}`,
      '-o',
      'json',
    ]);
    const reasons = JSON.parse(ev).items.map((e: any) => `${e.type}/${e.reason}: ${e.message}`);
    expect(reasons).toContainEqual(expect.stringMatching(/^Warning\/Failed: .*ImagePullBackOff/));
    expect(reasons).toContainEqual(expect.stringMatching(/^Warning\/Failed: .*does-not-exist/));
  });

  it('the Gateway is not Programmed, waiting for a ready proxy', async () => {
    // The load balancer address comes a moment after the Service (AddressNotAssigned until then); after that the
    // Gateway waits for its proxy, which never gets ready.
    const gw = await lab.kube.waitForCondition(GW_API, 'Gateway', 'gw', ns, 'Programmed', {
      status: 'False',
      reason: 'Pending',
    });
    const c = gw.status.conditions.find((x: any) => x.type === 'Programmed');
    expect(c.message).toMatch(/waiting for a ready proxy/);
    expect(gw.status.conditions.find((x: any) => x.type === 'Accepted')?.status).toBe('True');
    const d = await lab.kube.get('apps/v1', 'Deployment', 'gw', ns);
    expect(d?.status?.readyReplicas ?? 0).toBe(0);
  });

  it('explain names the pod that is not running, with its waiting reason and the pull events', async () => {
    // Kubernetes alternates the waiting reason: ErrImagePull right after each failed pull, ImagePullBackOff while the
    // kubelet waits to retry (its image back-off). A report names the reason that holds when it reads the pod, so
    // every report must name one of the two, and the back-off, where the pod spends its time, must come.
    const reasons: string[] = [];
    const { code, report, run, f } = await waitFor(
      'explain to report the proxy pod waiting in ImagePullBackOff',
      async () => {
        const r = await explainJson(lab, 'gateway/gw', ns);
        const f = r.report.findings.find((x: any) => /is not running/.test(x.message));
        const reason = /: container gwvendor-proxy waiting \((\w+)\): /.exec(f?.message ?? '')?.[1];
        reasons.push(reason ?? `no waiting reason in ${JSON.stringify(f?.message ?? r.run.stdout)}`);
        return { ok: reason === 'ImagePullBackOff', value: { ...r, f }, seen: reasons };
      },
      { timeoutMs: 60_000 },
    );
    for (const r of reasons) expect(['ErrImagePull', 'ImagePullBackOff'], reasons.join(', ')).toContain(r);
    expect(code, run.stdout).toBe(1);
    expect(f, run.stdout).toMatchObject({ level: 'problem', subject: `Gateway ${ns}/gw` });
    expect(f.message).toBe(
      `the proxy pod ${pod} is not running: container gwvendor-proxy waiting (ImagePullBackOff): ${f.message.split('(ImagePullBackOff): ')[1]}`,
    );
    expect(f.message).toContain('does-not-exist');
    expect(f.details.some((d: string) => /^event Warning Failed: .*does-not-exist/.test(d))).toBe(true);
    expect(f.details).toContain(`kubectl -n ${ns} describe pod ${pod}`);
    expect(report.proxies).toEqual([
      { gateway: `${ns}/gw`, pods: [expect.objectContaining({ pod, ready: false, configRead: false })] },
    ]);
  });

  it('without the image override the proxy runs and the Gateway is Programmed', async () => {
    // Server-side apply by the same field manager without the image field removes it.
    await lab.kube.apply(parameters('bootstrap: {logLevel: info}'));
    const gp = await lab.kube.get('gateway.gwvendor.dev/v1alpha1', 'GatewayParameters', 'gw', ns);
    expect(gp?.spec.kube.envoyContainer.image).toBeUndefined();
    await lab.kube.waitForRollout('gw', ns, { timeoutMs: 60_000 });
    await lab.kube.waitForCondition(GW_API, 'Gateway', 'gw', ns, 'Programmed', { timeoutMs: 60_000 });
    const pods = await lab.kube.list('v1', 'Pod', ns, POD_LABEL);
    const running = pods.filter((p) => p.status?.phase === 'Running' && !p.metadata?.deletionTimestamp);
    expect(running.map((p) => p.spec.containers[0].image)).not.toContain(BAD_IMAGE);
    expect(running.length).toBeGreaterThan(0);
  });
});
