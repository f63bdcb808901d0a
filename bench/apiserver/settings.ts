// bench:apiserver's scale (BENCH_OBJECTS overrides the object count for short runs) and the targets of issue 2 (and
// issue 14's client-node GET).

/** Concurrent clients of the create phases. */
export const CLIENTS = 16;
/** ConfigMaps created, then listed ("10,000 objects" in the report's wording). */
export const TOTAL = Number(process.env.BENCH_OBJECTS ?? 10_000);
export const WATCHERS = 50;
export const WRITES = 200;
export const TARGETS = {
  createsPerSec: 2000,
  list1kMs: 20,
  watchP99Ms: 10,
  rssMb10k: 300,
  clientNodeGetUs: 500,
  /** Issue 18: HTTPRoute creates/s with the CRD's CEL rules evaluated. */
  httpRouteCelCreatesPerSec: 1000,
};
