// How many embedded labs the scenario suite runs on side by side, and which of them a scenario file uses.
//
// Every scenario worker owns one lab for as long as it runs a file: vitest gives each running file a VITEST_POOL_ID
// between 1 and maxWorkers that no other running file has (vitest docs, "VITEST_POOL_ID": "unique id of the worker
// in the pool", the documented way to give each worker its own database), and the scenario project's maxWorkers is
// the number of labs. So a file never shares its lab with another running file: a scenario that restarts or
// reconfigures the control plane (08 validation mode, 10 rollout restart, 90 lab:reload) disturbs only itself, as
// when the files ran one at a time on one lab. Files that bring up labs of their own (91, 92, 93, 94) simply leave
// their worker's lab idle meanwhile.
import { availableParallelism } from 'node:os';

/** What the global setup hands each worker about one lab (vitest `provide('labs', ...)`). */
export interface ProvidedLab {
  kubeconfig: string;
  /** Context in the kubeconfig ('' = its current context). */
  context: string;
  name: string;
  /** GWLAB_HOME the lab is registered under ('' when unknown, e.g. an external cluster). */
  home: string;
  backend: string;
}

/** GWLAB_SCENARIO_LABS: at most this many (each lab is a lab process, a control plane and the sample apps). */
export const MAX_SCENARIO_LABS = 8;

/**
 * How many labs (and scenario files at once): one with KEEP=1 (the kept lab `scenarios`) or an external cluster
 * (GWLAB_SCENARIO_KUBECONFIG), else GWLAB_SCENARIO_LABS, else sized to the machine: the scenarios mostly wait
 * (rollouts, statuses, traffic retries), so one more lab than cores keeps them busy without starving the unit
 * project that runs beside them (scripts/test.ts).
 */
export function scenarioLabCount(env: NodeJS.ProcessEnv = process.env, cores = availableParallelism()): number {
  if (env.KEEP === '1' || env.GWLAB_SCENARIO_KUBECONFIG) return 1;
  const given = env.GWLAB_SCENARIO_LABS;
  if (given !== undefined && given !== '') {
    const n = Number(given);
    if (!Number.isInteger(n) || n < 1 || n > MAX_SCENARIO_LABS) {
      throw new Error(
        `GWLAB_SCENARIO_LABS=${JSON.stringify(given)}: give a whole number from 1 to ${MAX_SCENARIO_LABS} (the number of labs the scenarios run on side by side)`,
      );
    }
    return n;
  }
  return Math.min(MAX_SCENARIO_LABS, Math.max(1, cores) + 1);
}

/**
 * The lab of the running scenario file: the one numbered by its worker's VITEST_POOL_ID. The global setup starts as
 * many labs as files may run at once (maxWorkers, or fewer when fewer files run, in which case vitest never hands
 * out a larger id), so the modulo only matters outside that setup (a single external lab).
 */
export function labOfWorker(labs: ProvidedLab[], poolId: string | undefined = process.env.VITEST_POOL_ID): ProvidedLab {
  if (labs.length === 0) throw new Error('the scenario global setup provided no lab');
  const id = Number(poolId || '1');
  const i = Number.isInteger(id) && id >= 1 ? (id - 1) % labs.length : 0;
  return labs[i];
}
