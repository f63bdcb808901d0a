// The system image's entry point: `main.ts <component> [args...]`. Each component lives in system/<component>/main.ts
// and is imported only when asked for, so a component that does not load (or is not built yet) cannot break the others.
// The component's modules go through Node's compile cache (https://nodejs.org/api/module.html#module-compile-cache:
// V8's code cache and the type-stripped TypeScript, keyed by path and content), written once the component has
// started: the next start loads them without compiling or type-stripping them again (the control plane's ~1,600
// modules: ~40 % less CPU, issue 14). NODE_COMPILE_CACHE picks the folder (default <tmpdir>/node-compile-cache);
// NODE_DISABLE_COMPILE_CACHE=1 turns it off. The heavy dependencies (client-node, undici, yaml, grpc-js, protobufjs)
// resolve to their prebuilt bundles when the install made them (shared/dep-bundles.ts): a control plane loads ~1,100
// modules fewer at start, a proxy ~280; importing node:http does not load Node's own undici (shared/http-exports.ts).
import { existsSync } from 'node:fs';
import module from 'node:module';
import { fileURLToPath } from 'node:url';
import { useDependencyBundles } from './shared/dep-bundles.ts';
import { deferHttpUndiciExports } from './shared/http-exports.ts';

export const COMPONENTS = ['controlplane', 'proxy', 'sampleapp', 'extauth', 'echo', 'ratelimit', 'extproc'] as const;
export type Component = (typeof COMPONENTS)[number];

const USAGE = `usage: main.ts <component> [args...]
  component: ${COMPONENTS.join(' | ')}
  the remaining args go to the component unchanged (try: main.ts <component> --help)`;

export function isComponent(name: string | undefined): name is Component {
  return (COMPONENTS as readonly string[]).includes(name ?? '');
}

export async function dispatch(argv: string[]): Promise<number | undefined> {
  const [name, ...rest] = argv;
  if (name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(USAGE + '\n');
    return 0;
  }
  if (!isComponent(name)) {
    const what = name === undefined ? 'no component given' : `unknown component ${JSON.stringify(name)}`;
    process.stderr.write(`${what}\n${USAGE}\n`);
    return 2;
  }
  const entry = new URL(`./${name}/main.ts`, import.meta.url);
  if (!existsSync(fileURLToPath(entry))) {
    process.stderr.write(`component ${name} is not built yet: ${fileURLToPath(entry)} does not exist\n`);
    return 1;
  }
  module.enableCompileCache();
  deferHttpUndiciExports();
  useDependencyBundles();
  const mod = (await import(entry.href)) as { main?: (args: string[]) => Promise<void> };
  if (typeof mod.main !== 'function') {
    process.stderr.write(`component ${name}: ${fileURLToPath(entry)} does not export main(args)\n`);
    return 1;
  }
  await mod.main(rest);
  module.flushCompileCache();
  // The component keeps running as long as it holds open handles (servers, watches); it exits itself on signals.
  return undefined;
}

if (import.meta.main) {
  try {
    const code = await dispatch(process.argv.slice(2));
    if (code !== undefined) process.exitCode = code;
  } catch (err) {
    const component = process.argv[2];
    process.stderr.write(`${component}: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  }
}
