// A stand-in lab process for the orphan test: starts pods whose processes fork children (a detached Node grandchild
// in its own session, a shell with background sleeps), prints "ready" with the pids, and waits to be killed.
// Usage: node fake-lab.ts <lab> <dir> [sentinel|no-sentinel]
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { findTaggedProcesses } from '../runtime/orphans.ts';
import { ProcessRunner } from '../runtime/runner.ts';

const [lab, dir, mode = 'sentinel'] = process.argv.slice(2);
const runner = new ProcessRunner({ lab, sentinel: mode !== 'no-sentinel' });
mkdirSync(dir, { recursive: true });
const runtimeConfig = join(dir, 'runtime.json');
writeFileSync(
  runtimeConfig,
  JSON.stringify({
    version: 1,
    lab,
    pod: { namespace: 'default', name: 'forker', uid: 'u1', ip: '127.0.0.1' },
    hostname: 'forker',
    dns: { server: '127.0.0.1', port: 9, search: [], ndots: 5, clusterDomain: 'cluster.local' },
    mounts: [],
    watchdog: { ...runner.watchdogTarget(), intervalMs: 500 },
  }),
);
const grandchild = `
  const { spawn } = require('node:child_process');
  spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { detached: true, stdio: 'ignore' }).unref();
  setInterval(() => {}, 1000);
`;
runner.start({
  namespace: 'default',
  pod: 'forker',
  container: 'node',
  argv: ['node', '-e', grandchild],
  env: {},
  logFile: join(dir, 'node.log'),
  runtimeConfig,
});
let expected = 2;
if (mode !== 'no-sentinel') {
  runner.start({
    namespace: 'default',
    pod: 'shell',
    container: 'sh',
    argv: ['sh', '-c', 'sleep 300 & sleep 300 & wait'],
    env: {},
    logFile: join(dir, 'sh.log'),
  });
  expected += 3;
}
const timer = setInterval(() => {
  const procs = findTaggedProcesses({ lab });
  if (procs.length >= expected) {
    clearInterval(timer);
    console.log(`ready ${JSON.stringify(procs.map((p) => p.pid))}`);
  }
}, 50);
setInterval(() => {}, 1000);
