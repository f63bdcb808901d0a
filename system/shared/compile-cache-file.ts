// Files kept beside Node's compile cache (module.getCompileCacheDir(): system/main.ts and the lab turn it on, and the
// lab points every pod and tool at one folder): derived data that is costly to rebuild at every process start, such
// as the parsed Envoy protos (envoy/proto-cache.ts) and the lab's parsed CEL rules. A file's name carries a hash of
// what it was built from, so a process built from anything else never reads it.
import { createHash } from 'node:crypto';
import module from 'node:module';
import path from 'node:path';

/** `<compile cache>/<prefix>-<hash of inputs>.<ext>`, or undefined when this process has no compile cache. */
export function compileCacheFile(prefix: string, ext: string, inputs: unknown[]): string | undefined {
  const dir = module.getCompileCacheDir?.();
  if (!dir) return undefined;
  const key = createHash('sha256').update(JSON.stringify(inputs)).digest('hex').slice(0, 16);
  return path.join(dir, `${prefix}-${key}.${ext}`);
}
