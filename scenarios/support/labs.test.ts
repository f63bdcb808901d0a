// How many labs the scenario suite runs on and which one a file gets (labs.ts): one with KEEP=1 or an external
// cluster, GWLAB_SCENARIO_LABS within 1-8 (anything else refused naming the variable and the range), else one more
// than the machine's cores; a worker's VITEST_POOL_ID picks its lab; the scenario project runs as many files at once
// as there are labs (vitest.config.ts), and this worker's lab is the one useLab() hands out.
import { describe, expect, it } from 'vitest';
import config from '../../vitest.config.ts';
import { useLab, workerLab } from './lab.ts';
import { labOfWorker, type ProvidedLab, scenarioLabCount } from './labs.ts';

const lab = (name: string): ProvidedLab => ({
  kubeconfig: `/k/${name}`,
  context: '',
  name,
  home: '/h',
  backend: 'embedded',
});

describe('scenario labs', () => {
  it('counts one lab for KEEP=1 and for an external cluster, the given number, else cores + 1', () => {
    expect(scenarioLabCount({ KEEP: '1', GWLAB_SCENARIO_LABS: '4' }, 2)).toBe(1);
    expect(scenarioLabCount({ GWLAB_SCENARIO_KUBECONFIG: '/x', GWLAB_SCENARIO_LABS: '4' }, 2)).toBe(1);
    expect(scenarioLabCount({ GWLAB_SCENARIO_LABS: '4' }, 2)).toBe(4);
    expect(scenarioLabCount({ GWLAB_SCENARIO_LABS: '1' }, 16)).toBe(1);
    expect(scenarioLabCount({}, 2)).toBe(3);
    expect(scenarioLabCount({}, 1)).toBe(2);
    expect(scenarioLabCount({}, 64)).toBe(8);
    expect(scenarioLabCount({ GWLAB_SCENARIO_LABS: '' }, 2)).toBe(3);
  });

  it('refuses a GWLAB_SCENARIO_LABS that is not 1 to 8, naming the variable and the range', () => {
    for (const v of ['0', '9', '2.5', 'two', '-1']) {
      expect(() => scenarioLabCount({ GWLAB_SCENARIO_LABS: v }, 2)).toThrow(
        `GWLAB_SCENARIO_LABS=${JSON.stringify(v)}: give a whole number from 1 to 8`,
      );
    }
  });

  it("picks a worker's lab by its VITEST_POOL_ID", () => {
    const labs = [lab('one'), lab('two'), lab('three')];
    expect(labOfWorker(labs, '1').name).toBe('one');
    expect(labOfWorker(labs, '3').name).toBe('three');
    expect(labOfWorker([lab('only')], '2').name).toBe('only');
    expect(labOfWorker(labs, '').name).toBe('one');
    expect(labOfWorker(labs, '5').name).toBe('two');
    expect(() => labOfWorker([], '1')).toThrow('provided no lab');
  });

  it('runs as many scenario files at once as there are labs, and hands this worker its own lab', () => {
    const projects = (config.test?.projects ?? []) as Array<{ test: { name: string; maxWorkers?: number } }>;
    expect(projects.find((p) => p.test.name === 'scenarios')?.test.maxWorkers).toBe(scenarioLabCount());
    expect(useLab().name).toBe(workerLab().name);
    expect(useLab().kubeconfig).toBe(workerLab().kubeconfig);
  });
});
