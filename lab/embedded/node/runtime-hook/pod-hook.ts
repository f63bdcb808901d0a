// The pod runtime hook. The node agent loads it into every Node process of a pod with
// NODE_OPTIONS=--import=<this file>, so children inherit it, and configures it with the JSON file named by
// GWLAB_POD_RUNTIME (runtime-config.ts). It gives the process the pod's network identity (hook-net.ts), cluster DNS
// (hook-dns.ts), its volumes at their mountPaths (hook-fs.ts), the pod name as hostname and a watchdog on the lab.
// Without GWLAB_POD_RUNTIME it does nothing, so a stray NODE_OPTIONS outside a pod is harmless.
import { syncBuiltinESMExports } from 'node:module';
import os from 'node:os';
import { installDns } from './hook-dns.ts';
import { installFs } from './hook-fs.ts';
import { installNet } from './hook-net.ts';
import { installWatchdog } from './hook-watchdog.ts';
import { RUNTIME_ENV, readRuntimeConfig } from './runtime-config.ts';

const file = process.env[RUNTIME_ENV];
if (file) {
  const cfg = readRuntimeConfig(file);
  installNet(cfg);
  installDns(cfg);
  installFs(cfg.mounts ?? []);
  const hostname = cfg.hostname;
  os.hostname = () => hostname;
  if (cfg.watchdog) installWatchdog(cfg.watchdog);
  // ESM `import { readFileSync } from 'node:fs'` and friends are bindings of their own: refresh them.
  syncBuiltinESMExports();
}
