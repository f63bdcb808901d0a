// The control plane's informers (system/controlplane/kube/informers.ts: the shared list-watch loop over client-node)
// against the embedded API server (lab/, hence this folder outside system/): started before the CRDs exist, the
// custom kinds' lists answer 404 and are retried with the CRD hint in the log and the restart metric counting, until
// the CRDs are applied and every kind syncs; then objects flow into the input collections (ADDED/MODIFIED upserted,
// DELETED removed by namespace/name) and Deployments are narrowed by the table's label selector (watched.ts).
import { KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestLab, type TestLab } from '../../lab/embedded/apiserver/testing/test-lab.ts';
import { projectCrdsJson } from '../../lab/testing/crds.ts';
import { type InformerSet, startInformers } from '../../system/controlplane/kube/informers.ts';
import { WATCHED } from '../../system/controlplane/kube/watched.ts';
import { Metrics } from '../../system/controlplane/metrics.ts';
import { Pipeline } from '../../system/controlplane/pipeline.ts';
import { until } from '../../system/controlplane/testing/control-plane.ts';
import { LogRegistry } from '../../system/shared/log.ts';

let lab: TestLab;
let informers: InformerSet | undefined;
const lines: any[] = [];
const pipeline = new Pipeline({ mode: 'strict' });
const metrics = new Metrics();

beforeAll(async () => {
  lab = await startTestLab({ labName: 'cp-informers' });
}, 60_000);
afterAll(async () => {
  await informers?.stop();
  await lab?.stop();
});

const restarts = async (resource: string) =>
  (await metrics.informerRestarts.get()).values.find((v) => v.labels.resource === resource)?.value ?? 0;

describe('startInformers over client-node', () => {
  it('retries the kinds whose CRDs are missing (saying so, counted) and syncs every kind once they exist', async () => {
    const kc = new KubeConfig();
    kc.loadFromFile(lab.server.kubeconfigPath);
    const logs = new LogRegistry({ level: 'info', sink: (l) => lines.push(JSON.parse(l)) });
    informers = startInformers(kc, (k) => pipeline.inputFor(k), logs.logger('informers'), metrics);
    const routes = 'httproutes.gateway.networking.k8s.io';
    const hint = await until('a restart of the HTTPRoute informer', async () =>
      lines.find((l) => l.msg === 'informer stopped; restarting' && l.resource === routes),
    );
    expect(hint).toMatchObject({ level: 'info', reason: expect.stringContaining('are the CRDs installed?') });
    expect(hint.retryInMs).toBe(500);
    expect(await restarts(routes)).toBeGreaterThanOrEqual(1);
    expect(informers.isSynced()).toBe(false);
    // The core kinds list meanwhile.
    await until('Services synced', async () =>
      lines.some((l) => l.msg === 'synced' && l.resource === 'services') ? true : undefined,
    );

    await lab.k(['apply', '--server-side', '-f', '-'], projectCrdsJson());
    await Promise.race([
      informers.synced,
      new Promise((_, reject) => setTimeout(() => reject(new Error('not synced in 60 s')), 60_000).unref()),
    ]);
    expect(informers.isSynced()).toBe(true);
    expect(lines.filter((l) => l.msg === 'synced').map((l) => l.resource)).toHaveLength(
      WATCHED.filter((w) => !w.optional).length,
    );
  }, 90_000);

  it('upserts added and modified objects, deletes deleted ones, and reads only the proxies’ Deployments', async () => {
    const deployment = (name: string, labels: string) =>
      `apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: ${name}, namespace: default, labels: {${labels}}}\n` +
      'spec: {selector: {matchLabels: {app: x}}, template: {metadata: {labels: {app: x}}, ' +
      'spec: {containers: [{name: c, image: i}]}}}\n';
    await lab.k(
      ['apply', '-f', '-'],
      [
        'apiVersion: v1\nkind: Service\nmetadata: {name: s1, namespace: default}\nspec: {ports: [{port: 80}]}\n',
        deployment('proxy', 'gateway.networking.k8s.io/gateway-name: gw'),
        deployment('app', 'app: x'),
      ].join('---\n'),
    );
    await until('the Service and the proxy Deployment', async () =>
      pipeline.services.get('default/s1') && pipeline.deployments.get('default/proxy') ? true : undefined,
    );
    await lab.k(['label', 'service', 's1', 'seen=yes']);
    await until('the label', async () =>
      pipeline.services.get('default/s1')?.metadata.labels?.seen === 'yes' ? true : undefined,
    );
    await lab.k(['delete', 'service', 's1']);
    await until('the Service deleted', async () => (pipeline.services.get('default/s1') ? undefined : true));
    expect(pipeline.deployments.get('default/app')).toBeUndefined();
    expect(pipeline.deployments.get('default/proxy')).toBeDefined();
  }, 60_000);
});
