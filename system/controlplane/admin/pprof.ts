// Profiles of the control plane in pprof format (gzipped protobuf, what `go tool pprof` and other pprof tools read):
// CPU/wall time and the sampled heap come from V8 through @datadog/pprof; "handles" (Node's analogue of Go's
// goroutine profile: what keeps the process busy) is built with pprof-format.
import { createRequire } from 'node:module';
import { gzipSync } from 'node:zlib';
import { Line, Location, Function as PFunction, Profile, Sample, StringTable, ValueType } from 'pprof-format';

export interface ProfileInfo {
  name: string;
  description: string;
  /** A link with sensible parameters. */
  href: string;
}

export const PROFILES: ProfileInfo[] = [
  {
    name: 'profile',
    description:
      'CPU and wall time of the JavaScript thread, sampled for ?seconds=N (default 10, at most 120). The page answers when the sampling ends.',
    href: 'profile?seconds=10',
  },
  {
    name: 'heap',
    description: 'Live heap objects sampled since the control plane started (bytes and objects by allocation stack).',
    href: 'heap',
  },
  {
    name: 'handles',
    description:
      'Active handles and requests (timers, sockets, servers, watches) by type: what keeps the event loop alive.',
    href: 'handles',
  },
];

type DdPprof = typeof import('@datadog/pprof');
let dd: DdPprof | undefined;
let heapStarted = false;

/** Loads the native profiler lazily (it is only needed when someone profiles). */
function pprof(): DdPprof {
  if (!dd) dd = createRequire(import.meta.url)('@datadog/pprof') as DdPprof;
  return dd;
}

/** Starts heap sampling (every 512 KiB allocated, 64 frames deep), so /debug/pprof/heap has history. */
export function startHeapSampling(): void {
  if (heapStarted) return;
  pprof().heap.start(512 * 1024, 64);
  heapStarted = true;
}

export async function cpuProfile(seconds: number): Promise<Buffer> {
  const p = pprof();
  const profile = await p.time.profile({
    durationMillis: Math.round(seconds * 1000),
    withContexts: true,
    collectCpuTime: true,
  });
  return p.encode(profile);
}

export async function heapProfile(): Promise<Buffer> {
  startHeapSampling();
  const p = pprof();
  return p.encode(p.heap.profile());
}

/** Node's active resources (process.getActiveResourcesInfo) as a pprof count profile, one location per kind. */
export function handlesProfile(): Buffer {
  const counts = new Map<string, number>();
  for (const kind of process.getActiveResourcesInfo()) counts.set(kind, (counts.get(kind) ?? 0) + 1);
  const strings = new StringTable();
  const fns: PFunction[] = [];
  const locs: Location[] = [];
  const samples: Sample[] = [];
  let id = 1;
  for (const [kind, n] of [...counts].sort()) {
    const fn = new PFunction({
      id,
      name: strings.dedup(kind),
      systemName: strings.dedup(kind),
      filename: strings.dedup('node'),
    });
    fns.push(fn);
    locs.push(new Location({ id, line: [new Line({ functionId: id })] }));
    samples.push(new Sample({ locationId: [id], value: [n] }));
    id++;
  }
  const profile = new Profile({
    sampleType: [new ValueType({ type: strings.dedup('handles'), unit: strings.dedup('count') })],
    periodType: new ValueType({ type: strings.dedup('handles'), unit: strings.dedup('count') }),
    period: 1,
    sample: samples,
    location: locs,
    function: fns,
    stringTable: strings,
    timeNanos: BigInt(Date.now()) * 1_000_000n,
  });
  return gzipSync(profile.encode());
}
