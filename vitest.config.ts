import { defineConfig } from 'vitest/config';
import { scenarioLabCount } from './scenarios/support/labs.ts';
import { LongestFirst } from './scripts/test-order.ts';

// Two projects: unit and integration tests (next to the code; in tests/ those that span parts, e.g. system/ with lab/),
// and the scenario suite (on embedded labs side by side, one per running file: scenarios/support/labs.ts).
// scripts/test.ts runs the two as separate vitest processes at the same time.
export default defineConfig({
  test: {
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 120_000,
    teardownTimeout: 30_000,
    // Files that take long by design start first (scripts/test-order.ts).
    sequence: { sequencer: LongestFirst },
    projects: [
      {
        test: {
          name: 'unit',
          include: [
            'system/**/*.test.ts',
            'lab/**/*.test.ts',
            'scripts/**/*.test.ts',
            'bench/**/*.test.ts',
            'tests/**/*.test.ts',
            'conformance/utils/**/*.test.ts',
            'conformance/support/**/*.test.ts',
          ],
          pool: 'forks',
          // The default on 2 cores is one worker; many files mostly wait (servers, informers, timers), so three run
          // side by side: 265 s → 99 s for the unit project on this machine.
          maxWorkers: 3,
          // A worker runs file after file in one process instead of a fresh process per file: the modules every file
          // imports (client-node, the API server, the proxy) are loaded once per worker. Measured on this machine:
          // the unit workers' CPU 110 s → 54 s, the whole unit project's 212 s → 143 s. Every file cleans up after
          // itself (servers, clusters, temp folders in afterAll), which is what running them in one process needs.
          isolate: false,
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
      {
        test: {
          name: 'scenarios',
          include: ['scenarios/**/*.test.ts'],
          globalSetup: ['scenarios/support/global-setup.ts'],
          // Collects failure artifacts (reports/<run-id>/artifacts/) before a scenario's cleanup.
          setupFiles: ['scenarios/support/artifacts.ts'],
          // One file per lab at a time: some scenarios restart or reconfigure the control plane, which must not
          // disturb another file; the global setup starts this many labs and each worker uses its own (labs.ts).
          maxWorkers: scenarioLabCount(),
          // A worker runs its files in one process, as the unit project does: the lab clients and tools are loaded
          // once per worker, not once per file. The support modules keep no state of one file for the next
          // (support/lab.ts, support/artifacts.ts say how).
          isolate: false,
          // After the unit project when both run in one vitest process (their maxWorkers differ).
          sequence: { groupOrder: 1 },
          pool: 'forks',
          testTimeout: 180_000,
          hookTimeout: 300_000,
        },
      },
      {
        test: {
          name: 'conformance',
          // One file per upstream conformance test (conformance/README.md), against one lab that the global setup
          // brings up and prepares as upstream's suite Setup does; one file at a time, as upstream runs its tests.
          include: ['conformance/tests/**/*.test.ts'],
          globalSetup: ['conformance/support/global-setup.ts'],
          maxWorkers: 1,
          // The 128 files in one process: a fresh process per file loaded vitest and the suite's modules 128 times,
          // ~100 s of the project's 237 s of CPU and half its 425 s (measured side by side with the other projects).
          isolate: false,
          sequence: { groupOrder: 2 },
          pool: 'forks',
          testTimeout: 300_000,
          hookTimeout: 600_000,
        },
      },
    ],
  },
});
