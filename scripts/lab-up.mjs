// `npm run lab:up`'s entry, in plain JavaScript: Node strips a TypeScript entry with its TypeScript stripper (amaro,
// WebAssembly: ~50 ms of CPU and ~20 MB at every start), which the compile cache cannot spare an entry that turns the
// cache on itself. Here the cache is on before lab-up.ts loads, so it and its modules come stripped from the cache
// (lab/compile-cache.ts), and @kubernetes/client-node resolves to its prebuilt bundle (scripts/preload.mjs says why).
// `node scripts/lab-up.ts` works the same, only slower to start.
import module from 'node:module';

module.enableCompileCache();
const { useClientNodeBundle } = await import('../system/shared/kube/client-node-bundle.ts');
useClientNodeBundle();
await import('./lab-up.ts');
