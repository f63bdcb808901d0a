// `npm run apiserver -- --name <lab> [--port N] [--host H]`: runs a lab's API server (and the API-machinery
// controllers) in the foreground, printing `export KUBECONFIG=...`. Stops on SIGINT/SIGTERM.
import { parseArgs } from 'node:util';
import { LogRegistry, parseLevel } from '../../../system/shared/log.ts';
import { DEFAULT_LAB_NAME } from '../../state.ts';
import { startApiServer } from './index.ts';

const { values } = parseArgs({
  options: {
    name: { type: 'string', default: DEFAULT_LAB_NAME },
    port: { type: 'string' },
    host: { type: 'string', default: '127.0.0.1' },
    'log-level': { type: 'string', default: 'info' },
    'no-controllers': { type: 'boolean', default: false },
  },
});
const logs = new LogRegistry({
  level: parseLevel(values['log-level']!) ?? 'info',
  sink: (l) => process.stderr.write(`${l}\n`),
});
const server = await startApiServer({
  labName: values.name!,
  host: values.host,
  port: values.port ? Number(values.port) : undefined,
  logRegistry: logs,
});
// Loaded only when wanted.
const controllers = values['no-controllers']
  ? undefined
  : await (await import('../controllers/apimachinery.ts')).startApiMachinery(
      server.credentials({ user: 'system:kube-controller-manager' }),
      logs,
    );
process.stdout.write(`export KUBECONFIG=${server.kubeconfigPath}\n`);
let stopping = false;
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.on(sig, async () => {
    if (stopping) return;
    stopping = true;
    await controllers?.stop();
    await server.stop();
    process.exit(0);
  });
}
