// Where the benchmarks find the repository: its root (the working folder of every process they start), the system's
// entry point, and reports/bench/, where every bench writes its results.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const reportsDir = join(repoRoot, 'reports', 'bench');
/** system/main.ts: `<component> [args...]` runs the proxy, the sample application, ... as the image does. */
export const systemMain = join(repoRoot, 'system', 'main.ts');
