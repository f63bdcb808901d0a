// bench:apiserver's run: the server in its own process, then the phases in order — creates, memory, lists, watch
// fan-out (in this process, then in a separate one), client paths, HTTPRoutes with CEL on and off — then the report.
import { loadavg } from 'node:os';
import { removeTempDir, tempDir } from '../shared/processes.ts';
import { reportJson, writeReports } from '../shared/reports.ts';
import { clientPathPhase } from './client-path.ts';
import { httpRouteCelPhase } from './httproute-cel.ts';
import { apiserverMarkdown, apiserverResult } from './report.ts';
import { startApiServer } from './server-process.ts';
import { fanoutInProcess, fanoutSeparateProcess } from './watch-fanout.ts';
import { createsPhase, listsPhase, memoryPhase, payload } from './writes-and-lists.ts';

export async function runApiserverBench(): Promise<void> {
  const load0 = loadavg();
  const home = tempDir('gwlab-bench-');
  try {
    const s = await startApiServer(home);
    try {
      for (const ns of ['bench', 'small', 'fan', 'fan2'])
        await s.req('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
      const sizeBytes = JSON.stringify(payload(0)).length;
      const creates = await createsPhase(s);
      const memory = await memoryPhase(s);
      const lists = await listsPhase(s);
      const fanout = await fanoutInProcess(s);
      const separate = await fanoutSeparateProcess(s);
      const clientPath = await clientPathPhase(s);
      const cel = await httpRouteCelPhase(s);
      await s.agent.close().catch(() => {});
      const load1 = loadavg();
      const result = apiserverResult({
        load0,
        load1,
        sizeBytes,
        creates,
        memory,
        lists,
        fanout,
        separate,
        clientPath,
        cel,
      });
      const md = apiserverMarkdown(result);
      writeReports({ 'apiserver.json': reportJson(result), 'apiserver.md': md });
      process.stdout.write(`${md}\n`);
    } finally {
      await s.stop();
    }
  } finally {
    removeTempDir(home);
  }
}
