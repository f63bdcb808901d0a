// A whole embedded cluster in one process (API server, controllers, node agent), with a Deployment whose pods fork a
// detached Node grandchild and a shell with a background sleep. Prints "ready <runId> <GWLAB_HOME>" once the pods run, then
// waits to be killed. Usage: node mini-lab.ts <path of the http-app image program>
import { startTestCluster } from './test-cluster.ts';

const app = process.argv[2];
const forker = `
  const { spawn } = require('node:child_process');
  spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { detached: true, stdio: 'ignore' }).unref();
  spawn('sh', ['-c', 'sleep 300 & wait'], { stdio: 'ignore' });
  require('node:http').createServer((q, r) => r.end('ok')).listen(8080);
`;
const c = await startTestCluster({
  images: { 'gwlab.test/http-app:1': ['node', app], 'gwlab.test/forker:1': ['node', '-e', forker] },
});
await c.k(
  ['apply', '-f', '-'],
  `apiVersion: apps/v1
kind: Deployment
metadata: {name: forker, namespace: default}
spec:
  replicas: 2
  selector: {matchLabels: {app: forker}}
  template:
    metadata: {labels: {app: forker}}
    spec:
      containers: [{name: forker, image: gwlab.test/forker:1}]
`,
);
await c.k(['rollout', 'status', 'deployment/forker', '--timeout=60s']);
console.log(`ready ${c.node.runner.runId} ${c.lab.home}`);
setInterval(() => {}, 1000);
