// The lab's sentinel: a small process the runner starts beside the lab process, reading a pipe from it. When the lab
// process dies, even by SIGKILL, the pipe closes and the sentinel kills every process tagged with the lab run's id
// (grandchildren and detached ones included, which PR_SET_PDEATHSIG does not reach), then exits.
// Usage: node sentinel.ts <runId>
import { killTaggedProcesses } from './orphans.ts';

const run = process.argv[2];
if (!run) {
  process.stderr.write('usage: sentinel.ts <runId>\n');
  process.exit(2);
}
// Signals meant for the lab (Ctrl-C in its terminal) must not take the sentinel down before it has done its job.
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(sig, () => undefined);
process.stdin.on('data', () => undefined);
process.stdin.on('error', () => undefined);
process.stdin.once('close', async () => {
  await killTaggedProcesses({ run }, { signal: 'SIGKILL', timeoutMs: 4000 });
  process.exit(0);
});
process.stdin.resume();
