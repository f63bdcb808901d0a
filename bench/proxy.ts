// `npm run bench:proxy`: the proxy's figures from issue 4, three paths side by side in one run, each server in its
// own process (proxy/servers.ts):
//   direct — the sample application;
//   bare   — a bare pass-through Node proxy (node:http server + undici Pool), the runtime's ceiling (proxy/bare-proxy.ts);
//   proxy  — this proxy (system/main.ts proxy) with a realistic route table (50 virtual hosts, 1,000 routes with
//            header and regex matches, retries, header mutations, the cors filter; proxy/route-table.ts).
// Phases (proxy/run.ts runs them in order):
//   - 50 connections for 10 s (autocannon, closed loop) → req/s, p50/p99, errors, RSS, CPU per request per process
//     (proxy/closed-loop.ts);
//   - an open-loop probe through the proxy (rising rates, 2 s each) → the highest rate it sustains open-loop
//     (proxy/probe.ts);
//   - a fixed rate of half the proxy's maximum (the lower of the closed-loop and open-loop maxima) through each path,
//     in interleaved rounds (5 by default, the paths in a rotated order), each run from a fresh open-loop generator
//     process with its own warm-up (proxy/generator.ts, proxy/open-loop-run.ts) → latency from each request's due
//     time pooled over the rounds, p50/p99 and the latency added against direct, with the per-round figures, the
//     generator's own event-loop delay and GC and the machine's CPU pressure next to them (proxy/fixed-rate.ts,
//     proxy/window.ts, proxy/stalls.ts);
//   - a soak at that rate through a fresh proxy process: 10 s warm-up, then RSS (baseline, min, max, end, slope)
//     over 60 s (proxy/soak.ts);
//   - HTTPS/1.1, h2 over TLS and h2c (and HTTPS with a new connection per request: handshakes/s) through the proxy
//     against bare node:tls/node:http2 pass-through proxies → throughput ratios (proxy/protocols.ts);
//   - the proxy with ext_authz over gRPC (the ext-auth sample's Authorization/Check) against the plain proxy, closed
//     loop in interleaved rounds → req/s, p50/p99 and the throughput ratio (proxy/ext-authz-grpc.ts);
//   - a JSON access log to a file against none → logged/plain throughput, every request in the file
//     (proxy/access-log.ts);
//   - a route without retries or CORS while the other routes have both (and the cors filter runs) against a table
//     with neither → with/without throughput (proxy/feature-cost.ts);
//     these three compare proxy variants in interleaved closed-loop rounds (proxy/side-by-side.ts);
//   - a 1,000-route RouteConfiguration pushed over ADS → time to ACK; route lookup cost against virtual hosts
//     (proxy/route-config.ts).
// Writes reports/bench/proxy.json and proxy.md (proxy/report.ts). BENCH_DURATION_S, BENCH_SOAK_S, BENCH_SOAK_WARMUP_S,
// BENCH_FIXED_WARMUP_S, BENCH_FIXED_ROUNDS, BENCH_CONNECTIONS override (proxy/settings.ts).
// Its parts also run by hand, for profiling one path: `--bootstrap <app port>` prints the proxy's bootstrap with the
// bench's route table, `--bare <app port>` starts the bare proxy, `--bare-protocols <app port> <cert> <key>` the bare
// HTTPS/h2/h2c proxies, and `--load <port> <path> <rate> <warm-up s> <s>
// [latencies file]` runs the open-loop generator and prints its result as JSON. `--vs <checkout>` measures this
// proxy against another checkout's, side by side (proxy/versus.ts). Each mode loads only its own modules.

const mode = process.argv[2];
if (mode === '--bare-protocols') {
  const { bareProtocols } = await import('./proxy/bare-protocols.ts');
  await bareProtocols(Number(process.argv[3]), process.argv[4]!, process.argv[5]!);
} else if (mode === '--bare') {
  const { bareProxy } = await import('./proxy/bare-proxy.ts');
  await bareProxy(Number(process.argv[3]));
} else if (mode === '--bootstrap') {
  const { proxyBootstrap } = await import('./proxy/route-table.ts');
  process.stdout.write(`${JSON.stringify(proxyBootstrap(Number(process.argv[3])))}\n`);
} else if (mode === '--load') {
  const { openLoop } = await import('./proxy/generator.ts');
  const [, , , port, path, rate, warmupS, seconds, rawPath] = process.argv;
  const r = await openLoop(Number(port), path!, Number(rate), Number(warmupS), Number(seconds), rawPath);
  process.stdout.write(`load-result ${JSON.stringify(r)}\n`);
  process.exit(0);
} else {
  const { cleanUpOnExit, killChildren } = await import('./shared/processes.ts');
  const { progress } = await import('./shared/reports.ts');
  cleanUpOnExit();
  try {
    if (mode === '--vs') {
      const { proxyVersus } = await import('./proxy/versus.ts');
      await proxyVersus(process.argv[3] ?? '');
    } else {
      const { runProxyBench } = await import('./proxy/run.ts');
      await runProxyBench();
    }
    process.exit(0);
  } catch (err) {
    progress('proxy')(`failed: ${(err as Error).stack ?? err}`);
    killChildren();
    process.exit(1);
  }
}
