// bench:proxy's run: the servers of the three paths, then the phases in order — closed loop, open-loop probe, fixed
// rate in rounds, soak, HTTPS and HTTP/2, ext_authz over gRPC against the plain path, RouteConfiguration over ADS and lookup cost — then the report. The phases are described in
// bench/proxy.ts and in their own files.
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { killChildren, removeTempDir, tempDir } from '../shared/processes.ts';
import { progress, reportJson, writeReports } from '../shared/reports.ts';
import { accessLogPhase } from './access-log.ts';
import { closedLoopPhase } from './closed-loop.ts';
import { extAuthzGrpcMarkdown, extAuthzGrpcPhase } from './ext-authz-grpc.ts';
import { fixedRatePhase } from './fixed-rate.ts';
import { chooseFixedRate } from './probe.ts';
import { protocolsPhase } from './protocols.ts';
import { proxyChecks, proxyMarkdown, proxyResult } from './report.ts';
import { applyTime, lookupCost } from './route-config.ts';
import { startServers } from './servers.ts';
import { soakPhase } from './soak.ts';

const step = progress('proxy');

export async function runProxyBench(): Promise<void> {
  const load0 = loadavg();
  step(`machine: ${cpus().length} cpus, load ${load0.map((l) => l.toFixed(2)).join(' ')}`);
  const dir = tempDir('gwlab-bench-proxy-');
  try {
    const servers = await startServers(dir);
    const throughput = await closedLoopPhase(servers);
    const choice = await chooseFixedRate(servers, throughput.proxy!.rps);
    const fixedRate = await fixedRatePhase(servers, choice.rate, choice.why, dir);
    const { soak, soakRss } = await soakPhase(servers, choice.rate, dir);
    const protocols = await protocolsPhase(servers, dir);
    const extAuthzGrpc = await extAuthzGrpcPhase(servers, dir);
    const accessLog = await accessLogPhase(servers, dir);
    step('RouteConfiguration of 1,000 routes over ADS: push → ACK');
    const apply = await applyTime();
    step(
      `  ${apply.routes} routes, ${apply.bytes} bytes: median ${apply.medianMs} ms, max ${apply.maxMs} ms (decode+compile alone ${apply.decodeCompileMs} ms)`,
    );
    step('route lookup cost against the number of virtual hosts');
    const lookups = lookupCost();
    for (const l of lookups)
      step(`  ${l.vhosts} vhosts: ${l.nsPerLookup} ns per lookup (linear scan ${l.linearScanNs} ns)`);
    const measured = {
      load0,
      load1: loadavg(),
      throughput,
      choice,
      fixedRate,
      soak,
      soakRss,
      protocols,
      accessLog,
      apply,
      lookups,
    };
    const result = proxyResult(measured);
    const checks = proxyChecks(result, measured);
    const md = proxyMarkdown(result, checks, measured) + extAuthzGrpcMarkdown(extAuthzGrpc);
    const outDir = writeReports({ 'proxy.json': reportJson({ ...result, extAuthzGrpc, checks }), 'proxy.md': md });
    process.stdout.write(md);
    step(`wrote ${join(outDir, 'proxy.md')} and proxy.json`);
  } finally {
    killChildren();
    removeTempDir(dir);
  }
}
