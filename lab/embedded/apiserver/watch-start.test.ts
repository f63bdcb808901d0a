// Watches answer at once: kubectl's waiters (rollout status, wait --for=condition) list, then watch, and return only
// once the watch is established; a server that holds the response headers (or the first chunk) until the first event
// or keep-alive makes every such command take the keep-alive interval. Keep-alives here are 30 s, so a watch that is
// not flushed at once shows up as a 30-s command, not as noise.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestLab, type TestLab } from './testing/test-lab.ts';

let lab: TestLab;
beforeAll(async () => {
  lab = await startTestLab({ watchKeepAliveMs: 30_000, watchBookmarkMs: 60_000 });
});
afterAll(async () => {
  await lab?.stop();
});

/**
 * What "at once" means here: a third of the keep-alive, so a watch held until its first keep-alive (30 s) fails and a
 * busy machine does not (inside the whole suite at load ~20 the fastest of three runs took 1.2 s; alone ~0.2 s).
 */
const AT_ONCE_MS = 10_000;

/** The fastest of three runs of a kubectl command (a busy 2-core machine adds noise to one run, never to all three). */
async function fastest(args: string[]): Promise<{ ms: number; stdout: string }> {
  let best = { ms: Number.POSITIVE_INFINITY, stdout: '' };
  for (let i = 0; i < 3; i++) {
    const t = performance.now();
    const r = await lab.kubectl(args, { timeoutMs: 20_000 });
    const ms = performance.now() - t;
    if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${r.code}): ${r.stderr}`);
    if (ms < best.ms) best = { ms, stdout: r.stdout };
    if (ms < AT_ONCE_MS) break;
  }
  return best;
}

it('kubectl rollout status on a complete Deployment returns at once, not at the watch keep-alive', async () => {
  await lab.k(['create', 'deployment', 'done', '--image=example/web:1', '--replicas=2']);
  const gen = Number(await lab.k(['get', 'deploy', 'done', '-o', 'jsonpath={.metadata.generation}']));
  // What the Deployment controller writes once a rollout is complete.
  const status = {
    observedGeneration: gen,
    replicas: 2,
    updatedReplicas: 2,
    readyReplicas: 2,
    availableReplicas: 2,
    conditions: [
      { type: 'Available', status: 'True', reason: 'MinimumReplicasAvailable' },
      { type: 'Progressing', status: 'True', reason: 'NewReplicaSetAvailable' },
    ],
  };
  await lab.k(['patch', 'deploy', 'done', '--subresource=status', '--type=merge', '-p', JSON.stringify({ status })]);
  const r = await fastest(['rollout', 'status', 'deployment/done', '--timeout=15s']);
  expect(r.stdout).toContain('successfully rolled out');
  expect(r.ms).toBeLessThan(AT_ONCE_MS);
});

it('kubectl wait --for=condition on a custom resource whose condition is already true returns at once, not at the watch keep-alive', async () => {
  await lab.k(
    ['apply', '-f', '-'],
    `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: routes.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: routes, singular: route, kind: Route, listKind: RouteList}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, x-kubernetes-preserve-unknown-fields: true}
          status: {type: object, x-kubernetes-preserve-unknown-fields: true}
`,
  );
  await lab.k(['wait', '--for=condition=established', '--timeout=15s', 'crd/routes.example.com']);
  await lab.k(
    ['apply', '-f', '-'],
    'apiVersion: example.com/v1\nkind: Route\nmetadata: {name: r1, namespace: default}\nspec: {host: a}\n',
  );
  const status = { conditions: [{ type: 'Accepted', status: 'True', reason: 'Accepted', observedGeneration: 1 }] };
  await lab.k(['patch', 'route', 'r1', '--subresource=status', '--type=merge', '-p', JSON.stringify({ status })]);
  const r = await fastest(['wait', '--for=condition=Accepted', '--timeout=15s', 'route/r1']);
  expect(r.stdout).toContain('condition met');
  expect(r.ms).toBeLessThan(AT_ONCE_MS);
});
