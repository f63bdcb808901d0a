// bench:proxy's access log phase (issue 13: "access logging costs ≤ 15% of throughput"): two fresh proxy processes
// with the bench's bootstrap and route table, one of them with a JSON access log to a file (envoy.access_loggers.file, json_format with the
// operators the issue lists; lines written off the request path, system/proxy/http/access-log-buffer.ts), against the
// plain proxy, side by side (side-by-side.ts): ACCESS_LOG_ROUNDS closed-loop rounds of DURATION s, both loaded at once
// (`concurrent`: the machine's swings weigh on both alike) → req/s
// of each, the ratio logged/plain (median of the rounds' ratios), and the lines the file holds against the requests
// the logging proxy completed (every request logged). Beside req/s, each proxy process's CPU µs per request over its
// windows: on a shared, loaded machine throughput swings with the neighbours, CPU per request much less, so the
// logging cost shows there too (logged − plain, and its share).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { progress } from '../shared/reports.ts';
import { median, round2 } from '../shared/stats.ts';
import { proxyBootstrap } from './route-table.ts';
import { httpGet, type Servers, startProxyProcess } from './servers.ts';
import { CONNECTIONS, DURATION, type J } from './settings.ts';
import { proxiesSideBySide } from './side-by-side.ts';

const step = progress('proxy');
export const ACCESS_LOG_ROUNDS = Number(process.env.BENCH_ACCESS_LOG_ROUNDS ?? 3);
/** Logging may cost at most 15% of the plain proxy's throughput. */
export const ACCESS_LOG_MIN_RATIO = 0.85;

const JSON_FORMAT = {
  start_time: '%START_TIME%',
  method: '%REQ(:METHOD)%',
  path: '%REQ(X-ENVOY-ORIGINAL-PATH?:PATH)%',
  protocol: '%PROTOCOL%',
  response_code: '%RESPONSE_CODE%',
  response_flags: '%RESPONSE_FLAGS%',
  response_code_details: '%RESPONSE_CODE_DETAILS%',
  bytes_received: '%BYTES_RECEIVED%',
  bytes_sent: '%BYTES_SENT%',
  duration: '%DURATION%',
  upstream_host: '%UPSTREAM_HOST%',
  upstream_cluster: '%UPSTREAM_CLUSTER%',
  route_name: '%ROUTE_NAME%',
  request_id: '%REQ(X-REQUEST-ID)%',
};

export interface AccessLogResult {
  rounds: { plainRps: number; loggedRps: number; ratio: number; plainCpuUs: number; loggedCpuUs: number }[];
  plainRps: number;
  loggedRps: number;
  /** logged / plain, the median of the rounds' ratios. */
  ratio: number;
  /** The proxy process's CPU µs per request, median of the rounds, and the share logging adds to it. */
  plainCpuUs: number;
  loggedCpuUs: number;
  cpuCostShare: number;
  errors: number;
  linesWritten: number;
  requestsCompleted: number;
}

/** The bench's proxy bootstrap with a JSON access log to `file` on its listener. */
function loggingBootstrap(appPort: number, file: string): J {
  const b = proxyBootstrap(appPort);
  const hcm = b.static_resources.listeners[0].filter_chains[0].filters[0].typed_config;
  hcm.access_log = [
    {
      name: 'envoy.access_loggers.file',
      typed_config: {
        '@type': 'type.googleapis.com/envoy.extensions.access_loggers.file.v3.FileAccessLog',
        path: file,
        log_format: { json_format: JSON_FORMAT },
      },
    },
  ];
  return b;
}

const countLines = (file: string) => readFileSync(file, 'utf8').split('\n').filter(Boolean).length;

export async function accessLogPhase(servers: Servers, dir: string): Promise<AccessLogResult> {
  step(
    `access log: JSON to a file vs none, ${ACCESS_LOG_ROUNDS} rounds of ${DURATION} s, both loaded at once (${CONNECTIONS} connections each)`,
  );
  const file = join(dir, 'access.json');
  // Both fresh (the soak phase stopped the first proxy process), so that they differ only by the access log.
  const plain = await startProxyProcess(proxyBootstrap(servers.appPort), dir, 'access-log-plain');
  const logging = await startProxyProcess(loggingBootstrap(servers.appPort, file), dir, 'access-log');
  const s = await proxiesSideBySide({ plain, logged: logging }, { rounds: ACCESS_LOG_ROUNDS, seconds: DURATION });
  const rounds: AccessLogResult['rounds'] = s.perRound.map((r) => ({
    plainRps: r.plain.rps,
    loggedRps: r.logged.rps,
    ratio: r.plain.rps ? round2(r.logged.rps / r.plain.rps) : 0,
    plainCpuUs: r.plain.cpuUs!,
    loggedCpuUs: r.logged.cpuUs!,
  }));
  const errors = s.perRound.reduce(
    (n, r) => n + r.plain.errors + r.plain.non2xx + r.logged.errors + r.logged.non2xx,
    0,
  );
  const stats = await httpGet(`http://${logging.admin}/stats?filter=^http\\.http\\.downstream_rq_completed$`);
  const requestsCompleted = Number(/downstream_rq_completed: (\d+)/.exec(stats)?.[1] ?? 0);
  // The log is flushed once a second; stopping the process flushes the rest.
  plain.child.kill('SIGKILL');
  logging.child.kill('SIGTERM');
  await new Promise((r) => logging.child.once('exit', r));
  const linesWritten = countLines(file);
  const result: AccessLogResult = {
    rounds,
    plainRps: Math.round(median(rounds.map((x) => x.plainRps))),
    loggedRps: Math.round(median(rounds.map((x) => x.loggedRps))),
    ratio: round2(median(rounds.map((x) => x.ratio))),
    plainCpuUs: round2(median(rounds.map((x) => x.plainCpuUs))),
    loggedCpuUs: round2(median(rounds.map((x) => x.loggedCpuUs))),
    cpuCostShare: 0,
    errors,
    linesWritten,
    requestsCompleted,
  };
  result.cpuCostShare = result.plainCpuUs ? round2((result.loggedCpuUs - result.plainCpuUs) / result.loggedCpuUs) : 0;
  step(
    `  logged/plain ${result.ratio}; CPU µs/request ${result.plainCpuUs} → ${result.loggedCpuUs} (logging ${Math.round(result.cpuCostShare * 100)}% of it); ${linesWritten} lines written for ${requestsCompleted} requests`,
  );
  return result;
}

/** The target and the completeness of the log. */
export function accessLogChecks(a: AccessLogResult): [string, boolean, string][] {
  return [
    [
      'access logging (JSON to a file) costs ≤ 15% of throughput',
      a.ratio >= ACCESS_LOG_MIN_RATIO,
      `logged/plain ${a.ratio} (${a.loggedRps} against ${a.plainRps} req/s; rounds ${a.rounds.map((r) => r.ratio).join(', ')}); CPU µs/request ${a.plainCpuUs} → ${a.loggedCpuUs}, logging ${Math.round(a.cpuCostShare * 100)}% of it`,
    ],
    [
      'every request of the logging proxy is in its access log',
      a.linesWritten >= a.requestsCompleted && a.requestsCompleted > 0,
      `${a.linesWritten} lines for ${a.requestsCompleted} requests`,
    ],
  ];
}

export function accessLogSection(a: AccessLogResult): string[] {
  return [
    `## Access log: JSON to a file vs none, ${a.rounds.length} rounds of ${DURATION} s, both proxies loaded at once (${CONNECTIONS} connections each)`,
    '',
    'Two proxy processes with the same bootstrap and route table; one writes a JSON access log with the operators issue 13 lists to a file (lines buffered and written once a second or per 64 KiB, as Envoy’s file logger). The ratio is the median of the rounds’ logged/plain ratios.',
    '',
    '| round | plain req/s | logged req/s | logged/plain | plain CPU µs/req | logged CPU µs/req |',
    '|---|---|---|---|---|---|',
    ...a.rounds.map(
      (r, i) => `| ${i + 1} | ${r.plainRps} | ${r.loggedRps} | ${r.ratio} | ${r.plainCpuUs} | ${r.loggedCpuUs} |`,
    ),
    `| median | ${a.plainRps} | ${a.loggedRps} | ${a.ratio} | ${a.plainCpuUs} | ${a.loggedCpuUs} |`,
    '',
    `CPU per request of the proxy process: logging adds ${round2(a.loggedCpuUs - a.plainCpuUs)} µs, ${Math.round(a.cpuCostShare * 100)}% of the logging proxy's CPU per request (what it costs in throughput on a CPU-bound proxy).`,
    '',
    `Lines written: ${a.linesWritten} for ${a.requestsCompleted} requests completed by the logging proxy; errors ${a.errors}.`,
    '',
  ];
}
