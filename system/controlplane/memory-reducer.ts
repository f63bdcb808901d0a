// Gives V8's memory reducer back to the control plane process. After a burst of translation the old generation holds
// the garbage of the burst (V8 lets it grow to up to 4× the live heap before a full GC), and the pages a full GC frees
// stay in V8's page pool, still resident: only a *memory-reducing* GC releases them (deps/v8/src/heap/sweeper.cc,
// "Discard all pooled pages on memory-reducing GCs"). V8 runs such GCs itself once the process is idle: its
// MemoryReducer looks every 8 s and starts one when the allocation rate is low (memory-reducer.cc, heap.cc
// Heap::HasLowAllocationRate).
//
// On Node 24 (V8 13.6) that check never passes in a process that allocates nothing on cppgc, the C++ heap: since V8
// CL 5935313 ("[gc] Use exponential decay for allocation speed", V8 13.1) the embedder allocation throughput of such a
// process is exactly 0, and Heap::ComputeMutatorUtilizationImpl reads a mutator speed of 0 as the *lowest* mutator
// utilization, so HasLowEmbedderAllocationRate() is false and `--trace-memory-reducer` prints "high alloc" on every
// tick of an idle process. The memory then comes back only when the reducer's watchdog fires, 100 s after the last
// full GC — and every full GC in between starts that clock again. Measured with bench:controlplane's scale: 350 MB
// RSS idle 30 s after the work, 184 MB once the reducer has run (68 MB live heap either way).
//
// In Node, only node:vm allocates on cppgc (ContextifyScript, src/node_contextify.cc), so compiling a trivial script
// makes the embedder throughput positive and the reducer's check behaves as it does on Node 22: the memory-reducing
// GC follows 8-16 s after a burst, incremental like any V8-scheduled GC. The throughput decays by half every 100 ms and
// reaches exactly 0 again after ~110 s, hence a nudge every 30 s. Nothing here forces a GC or changes heap limits.
import { Script } from 'node:vm';

/** How often the embedder allocation throughput is made non-zero again (it decays to exactly 0 after ~110 s). */
export const NUDGE_INTERVAL_MS = 30_000;

let timer: NodeJS.Timeout | undefined;
let users = 0;

function nudge(): void {
  new Script('0', { filename: 'gwvendor-memory-reducer' });
}

/**
 * Keeps V8's memory reducer working in this process until the returned function is called (process-wide: several
 * callers share one timer, which never keeps the process alive).
 */
export function keepMemoryReducerWorking(): () => void {
  users++;
  if (!timer) {
    nudge();
    timer = setInterval(nudge, NUDGE_INTERVAL_MS);
    timer.unref();
  }
  let released = false;
  return () => {
    if (released) return;
    released = true;
    users--;
    if (users === 0 && timer) {
      clearInterval(timer);
      timer = undefined;
    }
  };
}
