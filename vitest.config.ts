import { defineConfig } from 'vitest/config';

// Two projects: unit and integration tests (next to the code; in tests/ those that span parts, e.g. system/ with lab/),
// and the scenario suite (which shares one embedded lab).
export default defineConfig({
  test: {
    pool: 'forks',
    testTimeout: 60_000,
    hookTimeout: 120_000,
    teardownTimeout: 30_000,
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
          ],
          pool: 'forks',
          // The default on 2 cores is one worker; many files mostly wait (servers, informers, timers), so three run
          // side by side: 265 s → 99 s for the unit project on this machine.
          maxWorkers: 3,
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
          // Scenarios share one lab and some restart or reconfigure the control plane: one file at a time.
          fileParallelism: false,
          pool: 'forks',
          testTimeout: 180_000,
          hookTimeout: 300_000,
        },
      },
    ],
  },
});
