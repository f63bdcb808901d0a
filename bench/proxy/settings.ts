// bench:proxy's settings: the durations and rates it runs with (environment overrides for short runs), the request
// every path serves, the targets of issue 4 the report checks, and the entry file its child processes run.
import { join } from 'node:path';
import { repoRoot } from '../shared/paths.ts';

/** bench/proxy.ts: the bare proxy (--bare) and the open-loop generator (--load) run from it in processes of their own. */
export const BENCH_ENTRY = join(repoRoot, 'bench', 'proxy.ts');

/** Seconds of each closed-loop run and of each fixed-rate window (BENCH_DURATION_S). */
export const DURATION = Number(process.env.BENCH_DURATION_S ?? 10);
/** Seconds of the soak's measured window (BENCH_SOAK_S). */
export const SOAK = Number(process.env.BENCH_SOAK_S ?? 60);
/** Keep-alive connections of both generators (BENCH_CONNECTIONS). */
export const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
export const HOST = 'www.example.com';
/** Through the proxy the route rewrites /api/v20/ to /; direct and bare ask the app for /headers itself. */
export const PROXY_PATH = '/api/v20/headers';
export const APP_PATH = '/headers';
/** Unmeasured seconds at the target rate before each fixed-rate measurement, and before the soak's baseline. */
export const FIXED_WARMUP_S = Number(process.env.BENCH_FIXED_WARMUP_S ?? 2);
export const SOAK_WARMUP_S = Number(process.env.BENCH_SOAK_WARMUP_S ?? 10);
/** Rounds of the fixed-rate phase (every path once per round). */
export const FIXED_ROUNDS = Number(process.env.BENCH_FIXED_ROUNDS ?? 5);
/** The open-loop probe's rates, as fractions of the proxy's closed-loop maximum, and its "kept up" bound. */
export const PROBE_STEPS = [0.5, 0.6, 0.75, 0.9, 1];
export const PROBE_STEPS_DOWN = [0.4, 0.3, 0.2];
export const PROBE_MAX_P50_MS = 5;
export const TARGETS = { throughputVsBare: 0.8, addedP50Ms: 1, addedP99Ms: 5, rssGrowth: 0.2, applyMs: 100 };

export type J = Record<string, any>;
