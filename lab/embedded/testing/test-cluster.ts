// Test helper: a whole embedded cluster in the test process (API server, API-machinery and workload controllers,
// node agent) on a claimed address range, with the machine's kubectl. Everything stops in stop().
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LogRegistry } from '../../../system/shared/log.ts';
import { type AddressPlan, addressPlan, claimLabIndex } from '../../state.ts';
import type { ApiServerOptions } from '../apiserver/index.ts';
import { startTestLab, type TestLab } from '../apiserver/testing/test-lab.ts';
import { type ApiMachinery, startApiMachinery } from '../controllers/apimachinery.ts';
import { startWorkloadControllers, type WorkloadControllers } from '../controllers/workloads.ts';
import { type NodeAgent, startNodeAgent } from '../node/agent.ts';
import { killTaggedProcesses } from '../node/runtime/orphans.ts';

export interface TestCluster {
  lab: TestLab;
  plan: AddressPlan;
  node: NodeAgent;
  controllers: WorkloadControllers;
  machinery: ApiMachinery;
  k(args: string[], input?: string): Promise<string>;
  stop(): Promise<void>;
}

export async function startTestCluster(
  opts: {
    images?: Record<string, string[]>;
    forceLbPortFallback?: boolean;
    lowPortShift?: boolean;
    /** Further options of the API server (e.g. serviceAccountMaxTokenExpirationSeconds). */
    apiServer?: Partial<ApiServerOptions>;
  } = {},
): Promise<TestCluster> {
  const claim = await claimLabIndex();
  const plan = addressPlan(claim.index);
  const cleanups: (() => Promise<unknown>)[] = [() => claim.release()];
  const unwind = async () => {
    for (const f of cleanups.splice(0).reverse()) await f().catch(() => undefined);
  };
  try {
    const lab = await startTestLab({ ...opts.apiServer, addressPlan: plan, labName: `node-${claim.index}` });
    cleanups.push(() => lab.stop());
    const logs = new LogRegistry({ level: 'warn', sink: (l) => process.stderr.write(`${l}\n`) });
    if (opts.images) {
      const yaml = Object.entries(opts.images)
        .map(([k, v]) => `  "${k}": ${JSON.stringify(v)}`)
        .join('\n');
      writeFileSync(join(lab.home, 'images.yaml'), `images:\n${yaml}\n`);
    }
    const machinery = await startApiMachinery(
      await lab.server.kubeConfig({ user: 'system:kube-controller-manager' }),
      logs,
    );
    cleanups.push(() => machinery.stop());
    const controllers = startWorkloadControllers(
      await lab.server.kubeConfig({ user: 'system:kube-controller-manager' }),
      logs,
      { lbOctet: plan.lbOctet, provisionDelayMs: 200 },
    );
    cleanups.push(() => controllers.stop());
    const node = await startNodeAgent({
      labName: lab.name,
      home: lab.home,
      plan,
      apiServer: lab.server,
      logs,
      forceLbPortFallback: opts.forceLbPortFallback,
      lowPortShift: opts.lowPortShift,
      backoff: { initialSeconds: 1, maxSeconds: 4 },
    });
    const run = node.runner.runId;
    cleanups.push(async () => {
      await node.stop(2);
      await killTaggedProcesses({ run });
    });
    node.proxy.on('bind', controllers.loadBalancers.onBind);
    return {
      lab,
      plan,
      node,
      controllers,
      machinery,
      k: (args, input) => lab.k(args, input),
      stop: unwind,
    };
  } catch (err) {
    await unwind();
    throw err;
  }
}
