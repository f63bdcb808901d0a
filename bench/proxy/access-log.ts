// bench:proxy's access log phase (issue 13: "access logging costs ≤ 15% of throughput"): two fresh proxy processes
// with the bench's bootstrap and route table, one of them with a JSON access log to a file (envoy.access_loggers.file, json_format with the
// operators the issue lists; lines written off the request path, system/proxy/http/access-log-buffer.ts), against the
// plain proxy, side by side: ACCESS_LOG_ROUNDS interleaved closed-loop rounds of DURATION s (each process warmed up
// 2 s first, the order rotated per round) → req/s of each, the ratio logged/plain (median of the rounds' ratios), and
// the lines the file holds against the requests the logging proxy completed (every request logged).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { progress } from '../shared/reports.ts';
import { median, round2 } from '../shared/stats.ts';
import { autocannonRun } from './closed-loop.ts';
import { proxyBootstrap } from './route-table.ts';
import { httpGet, listenerPort, type Servers, startProxyProcess } from './servers.ts';
import { CONNECTIONS, DURATION, type J, PROXY_PATH } from './settings.ts';

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
  rounds: { plainRps: number; loggedRps: number; ratio: number }[];
  plainRps: number;
  loggedRps: number;
  /** logged / plain, the median of the rounds' ratios. */
  ratio: number;
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
    `access log: JSON to a file vs none, ${ACCESS_LOG_ROUNDS} interleaved rounds of ${DURATION} s, ${CONNECTIONS} connections`,
  );
  const file = join(dir, 'access.json');
  // Both fresh (the soak phase stopped the first proxy process), so that they differ only by the access log.
  const plain = await startProxyProcess(proxyBootstrap(servers.appPort), dir, 'access-log-plain');
  const logging = await startProxyProcess(loggingBootstrap(servers.appPort, file), dir, 'access-log');
  const ports = { plain: await listenerPort(plain.admin), logged: await listenerPort(logging.admin) };
  for (const port of Object.values(ports)) await autocannonRun(port, PROXY_PATH, 2);
  const rounds: AccessLogResult['rounds'] = [];
  let errors = 0;
  for (let r = 0; r < ACCESS_LOG_ROUNDS; r++) {
    const order: ('plain' | 'logged')[] = r % 2 === 0 ? ['plain', 'logged'] : ['logged', 'plain'];
    const rps: Record<string, number> = {};
    for (const which of order) {
      const t = await autocannonRun(ports[which], PROXY_PATH, DURATION);
      rps[which] = t.rps;
      errors += t.errors + t.non2xx;
    }
    const ratio = rps.plain ? round2(rps.logged! / rps.plain) : 0;
    rounds.push({ plainRps: rps.plain!, loggedRps: rps.logged!, ratio });
    step(`  round ${r + 1}: plain ${rps.plain} req/s, logged ${rps.logged} req/s (${ratio})`);
  }
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
    errors,
    linesWritten,
    requestsCompleted,
  };
  step(`  logged/plain ${result.ratio}; ${linesWritten} lines written for ${requestsCompleted} requests`);
  return result;
}

/** The target and the completeness of the log. */
export function accessLogChecks(a: AccessLogResult): [string, boolean, string][] {
  return [
    [
      'access logging (JSON to a file) costs ≤ 15% of throughput',
      a.ratio >= ACCESS_LOG_MIN_RATIO,
      `logged/plain ${a.ratio} (${a.loggedRps} against ${a.plainRps} req/s; rounds ${a.rounds.map((r) => r.ratio).join(', ')})`,
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
    `## Access log: JSON to a file vs none, ${a.rounds.length} interleaved rounds of ${DURATION} s (${CONNECTIONS} connections)`,
    '',
    'Two proxy processes with the same bootstrap and route table; one writes a JSON access log with the operators issue 13 lists to a file (lines buffered and written once a second or per 64 KiB, as Envoy’s file logger). The ratio is the median of the rounds’ logged/plain ratios.',
    '',
    '| round | plain req/s | logged req/s | logged/plain |',
    '|---|---|---|---|',
    ...a.rounds.map((r, i) => `| ${i + 1} | ${r.plainRps} | ${r.loggedRps} | ${r.ratio} |`),
    `| median | ${a.plainRps} | ${a.loggedRps} | ${a.ratio} |`,
    '',
    `Lines written: ${a.linesWritten} for ${a.requestsCompleted} requests completed by the logging proxy; errors ${a.errors}.`,
    '',
  ];
}
