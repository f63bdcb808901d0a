// `node --import ./scripts/preload.mjs scripts/<tool>.ts`, what the tools' npm scripts run: before the tool's first
// module loads, Node's compile cache is turned on (lab/compile-cache.ts: its modules come compiled and type-stripped
// from the cache, no TypeScript stripper loaded) and the heavy dependencies resolve to their prebuilt bundles
// (system/shared/dep-bundles.ts: @kubernetes/client-node as 3 modules instead of ~870, ~0.25 s less CPU per start). Plain
// JavaScript for the reason scripts/lab-up.mjs gives. `node scripts/<tool>.ts` works the same, only slower to start.
import module from 'node:module';

module.enableCompileCache();
// The same start the lab process gets (lab/embedded/process.ts passes it as --import).
await import('../system/shared/dep-bundles-register.ts');
