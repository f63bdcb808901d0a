// `npm run bench:apiserver`: the embedded API server's figures from issue 2, measured against a server in its own
// process (as in a lab) with durability on (SQLite WAL, every write in the log before it is acknowledged):
// creates/s with 16 concurrent clients (~1 KB ConfigMaps), list latency at 1,000 and 10,000 objects, watch fan-out
// latency to 50 watchers, resident memory holding 10,000 objects; plus the per-request cost of the client paths
// (client-node over HTTPS vs raw HTTPS vs an in-process call), which decided how controllers talk to the server.
// Where a target is missed, the report says why and what would close it, from data collected alongside the figures
// (the server's GC pauses, event-loop delay and memory through a preload in its process; this process's GC pauses;
// CPU use, run-queue waits, CPU pressure and steal from /proc), without changing what is measured.
// The parts, in bench/apiserver/: server-process (the server and its diagnostics preload), writes-and-lists,
// watch-fanout (+ fanout-tail: what the slow deliveries were made of), client-path, report (+ notes on misses),
// settings (BENCH_OBJECTS overrides the object count; BENCH_CPU_PROF=<dir> profiles the server), run.
// Writes reports/bench/apiserver.json and apiserver.md.

import { runApiserverBench } from './apiserver/run.ts';
import { cleanUpOnExit } from './shared/processes.ts';

cleanUpOnExit();
await runApiserverBench();
