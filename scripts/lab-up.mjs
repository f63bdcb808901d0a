// `npm run lab:up`'s entry, in plain JavaScript: Node strips a TypeScript entry with its TypeScript stripper (amaro,
// WebAssembly: ~50 ms of CPU and ~20 MB at every start), which the compile cache cannot spare an entry that turns the
// cache on itself. Here preload.mjs (the tools' start: compile cache on, @kubernetes/client-node from its prebuilt
// bundle) runs before lab-up.ts loads, so it and its modules come stripped from the cache (lab/compile-cache.ts).
// `node scripts/lab-up.ts` works the same, only slower to start.
import './preload.mjs';

await import('./lab-up.ts');
