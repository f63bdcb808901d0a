// `node --import <this file> <entry>`: the dependency bundles (dep-bundles.ts) in use before the entry's first import,
// for an entry whose static imports load the bundled packages: the lab process (lab/embedded/process.ts) and, through
// scripts/preload.mjs, the tools. node:http's undici-backed exports are kept out of its ES namespace (http-exports.ts).
import { useDependencyBundles } from './dep-bundles.ts';
import { deferHttpUndiciExports } from './http-exports.ts';

deferHttpUndiciExports();
useDependencyBundles();
