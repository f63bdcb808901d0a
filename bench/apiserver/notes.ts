// bench:apiserver's notes on missed targets: for each, why it was missed and what would close it, from the
// diagnostics collected beside the figures (CPU per operation, GC, run-queue waits, memory breakdown).
import { round2 } from '../shared/stats.ts';
import { CAUSES, type Tail, type TailCause } from './fanout-tail.ts';
import { CLIENTS, TARGETS, WATCHERS, WRITES } from './settings.ts';

export type Notes = Partial<Record<'creates' | 'list1k' | 'watchP99' | 'memory' | 'clientNodeGet', string>>;

/** The parts of apiserver.json the notes read. */
interface Figures {
  machine: { cpus: number };
  load: { after: number[] };
  setup: { objectBytes: number };
  creates: { perSecond: number; serverCpuUsPerCreate: number; clientCpuUsPerCreate: number };
  list: { objects1k: { p50Ms: number } };
  watchFanout: { fromSendP99Ms: number; serverCpuUsPerDelivery: number; separateProcess: { p99Ms: number } };
  memory: { rssMbHolding10k: number };
  clientPath: { clientNodeHttpsUs: number; rawHttpsUs: number };
  met: { creates: boolean; list1k: boolean; watchP99: boolean; memory: boolean; clientNodeGet: boolean };
  diagnostics: { memory: Record<string, number>; clientPathCpuUsPerGet: Record<string, number> };
}

/** The note for the watch p99 target: which cause the tail comes from, in the data above, and what would close it. */
function watchNote(t: Tail, p99: number, total: number, writes: number, serverUsPerDelivery: number, sepP99: number) {
  const m = t.machine;
  const facts =
    `p99 ${p99} ms (p50 ${t.p50Ms} ms): ${t.slowDeliveries} of ${total} deliveries, from ${t.slowWrites} of ` +
    `${writes} writes, took over ${TARGETS.watchP99Ms} ms (a late write makes all its watchers late). ` +
    `GC in the window: the server paused ${t.serverGc.count} times (${t.serverGc.totalMs} ms in all, longest ` +
    `${t.serverGc.maxMs} ms), this process (it parses the 50 streams and timestamps the deliveries) ` +
    `${t.benchGc.count} times (${t.benchGc.totalMs} ms, longest ${t.benchGc.maxMs} ms). Waiting for a CPU: from ` +
    `send to slowest delivery the main threads of the server and of this process spent a median ` +
    `${t.runQueueWait.slowWritesP50Ms} ms in the run queue for the slow writes against ${t.runQueueWait.allWritesP50Ms} ` +
    `ms for all writes; the server's event loop ran late by up to ${t.serverEventLoopDelay.maxMs} ms (p99 ` +
    `${t.serverEventLoopDelay.p99Ms} ms) while it used ${m.serverCores} of a core. Machine: ${m.busyCores} of ` +
    `${m.cores} cores busy (server ${m.serverCores}, this process ${m.benchCores}, other processes ${m.otherCores}), ` +
    `some thread waiting for a CPU ${Number.isNaN(m.cpuPressurePct) ? '(no PSI here)' : `${m.cpuPressurePct}% of the time`}, ` +
    `steal ${m.stealPct}%, load ${m.loadavg.join(' ')}. Slow deliveries by cause: ` +
    `${CAUSES.map((c) => `${c} ${t.byCause[c]}`).join(', ')}.`;
  const perWriteMs = round2((serverUsPerDelivery * 50) / 1000);
  const verdict: Record<TailCause, string> = {
    'waiting for a CPU':
      ' So the tail is scheduling noise, not GC: the slow writes waited for a CPU on a machine shared with other ' +
      `work. The server's own cost is ${serverUsPerDelivery} µs per delivery (~${perWriteMs} ms of CPU per write to ` +
      '50 watchers), well inside the target. What would close it: cores that the server and the watchers do not ' +
      'share with other work (an idle machine, or more cores than the benchmark keeps busy); no server change ' +
      'shortens a wait for the CPU.',
    'server GC':
      " So the tail comes from the server's GC pauses. What would close it: fewer allocations per write and per " +
      'delivery on the server (the pauses are the young-generation scavenges the write path fills), or a larger ' +
      'young generation (node --max-semi-space-size) so that they come less often.',
    'bench GC':
      ' So the tail comes from GC in the measuring process, not in the server. What would close it: watchers that ' +
      'allocate less per event, or timestamps taken in a process of their own (the separate-process figure, p99 ' +
      `${sepP99} ms, is that measurement, with its own noise on 2 cores).`,
    unexplained:
      " Neither GC nor waiting for a CPU covers most of the slow writes' delay. What would close it: a finer trace " +
      'of those writes (timestamps inside the server at commit and at each socket write) to find where they wait.',
  };
  return facts + (t.dominant ? verdict[t.dominant] : '');
}

function createsNote(r: Figures, load: string): string {
  const alone = Math.round(1e6 / r.creates.serverCpuUsPerCreate);
  return (
    `${r.creates.perSecond} creates/s with ${CLIENTS} clients. The server used ${r.creates.serverCpuUsPerCreate} ` +
    `µs of CPU per create (~${alone}/s on one core) and the benchmark client ${r.creates.clientCpuUsPerCreate} µs, ` +
    `on cores shared with other work (${load}). ` +
    (alone >= TARGETS.createsPerSec
      ? 'The server alone has the capacity: the miss is the client and other processes competing for the same ' +
        'cores, and a machine where the server has a core to itself would close it.'
      : `The server's own cost per create is above the ${Math.round(1e6 / TARGETS.createsPerSec)} µs the target ` +
        'allows on one core: the write path must get cheaper (BENCH_CPU_PROF=<dir> profiles the server).')
  );
}

function list1kNote(r: Figures, load: string, listServerCpuMs: number): string {
  return (
    `p50 ${r.list.objects1k.p50Ms} ms for 1,000 objects of ${r.setup.objectBytes} bytes; the server spent ` +
    `${round2(listServerCpuMs)} ms of CPU per list (${load}). ` +
    (listServerCpuMs < TARGETS.list1kMs
      ? "The server's own work fits the target: the rest is the transfer and waiting for a CPU, which a machine " +
        'without other work would close.'
      : "The server's own work per list exceeds the target. It already sends each object's JSON cached at write " +
        'time, in 256-KB writes, so what is left is walking the objects, joining the strings and TLS encryption: ' +
        'a CPU profile of the server (BENCH_CPU_PROF=<dir>) shows which of them to make cheaper.')
  );
}

function memoryNote(r: Figures): string {
  const mb = r.diagnostics.memory;
  return (
    `RSS ${r.memory.rssMbHolding10k} MB holding 10,000 objects: V8 heap used ${mb.heapUsedMb} MB of ` +
    `${mb.heapTotalMb} MB, external ${mb.externalMb} MB (the rest is code, SQLite's page cache and TLS). ` +
    (mb.heapTotalMb! > r.memory.rssMbHolding10k / 2
      ? 'The heap dominates: each object is held twice, parsed and as its JSON (cached at write time for get, ' +
        'list and watch); holding one form is the first candidate, and a heap snapshot of the server (node ' +
        '--heapsnapshot-signal) shows which retainers are largest.'
      : "The heap is not the main part: SQLite's cache (PRAGMA cache_size) and native buffers are where to look.")
  );
}

function clientNodeGetNote(r: Figures, load: string): string {
  const { clientNodeHttpsUs: cn, rawHttpsUs: raw } = r.clientPath;
  const cpu = r.diagnostics.clientPathCpuUsPerGet;
  return (
    `${cn} µs per GET through client-node against ${raw} µs over raw HTTPS, both on kept-alive connections to the ` +
    `same server, timed in interleaved rounds (${load}). ` +
    (raw >= TARGETS.clientNodeGetUs * 0.8
      ? 'The raw path alone is close to the target: the server and waiting for a CPU take most of it, which a ' +
        'machine without other work would close.'
      : `The ${Math.round(cn - raw)} µs between them is this process's CPU (${cpu.clientNode} against ${cpu.raw} µs per ` +
        "GET): client-node's per-request work (its typed deserialization, the credentials and TLS files applied to " +
        'each request, its middleware chain); a CPU profile of the GET loop shows which to cut.')
  );
}

/** A note for each missed target; `listServerCpuMs` unrounded, as the list note compares it with the target. */
export function missedTargetNotes(r: Figures, x: { tail: Tail; listServerCpuMs: number }): Notes {
  const load = `load ${r.load.after.join(' ')} on ${r.machine.cpus} cores`;
  const notes: Notes = {};
  if (!r.met.creates) notes.creates = createsNote(r, load);
  if (!r.met.list1k) notes.list1k = list1kNote(r, load, x.listServerCpuMs);
  if (!r.met.watchP99)
    notes.watchP99 = watchNote(
      x.tail,
      r.watchFanout.fromSendP99Ms,
      WATCHERS * WRITES,
      WRITES,
      r.watchFanout.serverCpuUsPerDelivery,
      r.watchFanout.separateProcess.p99Ms,
    );
  if (!r.met.memory) notes.memory = memoryNote(r);
  if (!r.met.clientNodeGet) notes.clientNodeGet = clientNodeGetNote(r, load);
  return notes;
}
