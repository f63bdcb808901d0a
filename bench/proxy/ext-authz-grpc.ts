// bench:proxy's ext_authz-over-gRPC phase (issue 13, "Performance"): a plain proxy against the same proxy, route table
// and request with envoy.filters.http.ext_authz in front (both fresh processes of this phase: the soak has replaced
// the first phases' proxy by then) (grpc_service.envoy_grpc to the ext-auth
// sample's Authorization/Check on an HTTP/2 cluster, every request allowed by its `x-ext-authz: allow`), each in its
// own process, measured closed-loop side by side in interleaved rounds (side-by-side.ts) → req/s, p50, p99 per path,
// medians over the rounds, and the ratio of the ext_authz path's throughput to the plain one (median of the rounds').
import type { ChildProcess } from 'node:child_process';
import { H2_CLUSTER } from '../../system/proxy/testing/harness.ts';
import { systemMain } from '../shared/paths.ts';
import { startNode } from '../shared/processes.ts';
import { progress } from '../shared/reports.ts';
import type { Throughput } from './closed-loop.ts';
import { proxyBootstrap } from './route-table.ts';
import { listenerPort, type Servers, startProxyProcess } from './servers.ts';
import { DURATION, type J } from './settings.ts';
import { medianRatio, sideBySide } from './side-by-side.ts';

const step = progress('proxy');
const ROUNDS = 3;
const ALLOW = { 'x-ext-authz': 'allow' };

export interface ExtAuthzGrpc {
  rounds: number;
  seconds: number;
  plain: Throughput;
  extAuthzGrpc: Throughput;
  perRound: { plain: Throughput; extAuthzGrpc: Throughput }[];
  /** ext_authz path's req/s over the plain path's (medians). */
  throughputRatio: number;
  /** The ext-auth sample's Check calls the proxy made (its cluster's upstream_rq_total), against the requests sent. */
  checks: number;
}

/** The bench's proxy bootstrap with ext_authz over gRPC first in the chain and the ext-auth sample's cluster. */
function extAuthzBootstrap(appPort: number, grpcPort: number): J {
  const b = proxyBootstrap(appPort);
  b.static_resources.clusters.push({
    name: 'extauth-grpc',
    type: 'STATIC',
    connect_timeout: '1s',
    load_assignment: {
      cluster_name: 'extauth-grpc',
      endpoints: [
        {
          lb_endpoints: [{ endpoint: { address: { socket_address: { address: '127.0.0.1', port_value: grpcPort } } } }],
        },
      ],
    },
    ...H2_CLUSTER,
  });
  const hcm = b.static_resources.listeners[0].filter_chains[0].filters[0].typed_config;
  hcm.http_filters.unshift({
    name: 'envoy.filters.http.ext_authz',
    typed_config: {
      '@type': 'type.googleapis.com/envoy.extensions.filters.http.ext_authz.v3.ExtAuthz',
      grpc_service: { envoy_grpc: { cluster_name: 'extauth-grpc' }, timeout: '1s' },
      transport_api_version: 'V3',
      allowed_headers: { patterns: [{ exact: 'x-ext-authz', ignore_case: true }] },
    },
  });
  return b;
}

export async function extAuthzGrpcPhase(servers: Servers, dir: string): Promise<ExtAuthzGrpc> {
  step(`ext_authz over gRPC: plain proxy vs ext_authz (Authorization/Check) proxy, ${ROUNDS} rounds of ${DURATION} s`);
  const authz = await startNode(
    [systemMain, 'extauth', '--port', '0', '--grpc-port', '0', '--host', '127.0.0.1'],
    /listening \(gRPC\)[^\n]*"port":(\d+)/,
    'ext-auth sample',
  );
  // Its decision lines are not read: drain them.
  const child: ChildProcess = authz.child;
  child.stdout!.removeAllListeners('data');
  child.stdout!.resume();
  const proxy = await startProxyProcess(extAuthzBootstrap(servers.appPort, Number(authz.match[1])), dir, 'extauthz');
  // A fresh plain proxy: the soak phase stopped the first one.
  const plainProxy = await startProxyProcess(proxyBootstrap(servers.appPort), dir, 'extauthz-plain');
  const s = await sideBySide(
    { plain: await listenerPort(plainProxy.admin), extAuthzGrpc: await listenerPort(proxy.admin) },
    { rounds: ROUNDS, seconds: DURATION, headers: ALLOW },
  );
  const perRound = s.perRound;
  const stats = await (
    await fetch(`http://${proxy.admin}/stats?format=json&filter=extauth-grpc.upstream_rq_total$`)
  ).json();
  const checks = Number((stats as J).stats?.[0]?.value ?? 0);
  proxy.child.kill('SIGTERM');
  plainProxy.child.kill('SIGTERM');
  child.kill('SIGTERM');
  const { plain, extAuthzGrpc } = s.median;
  const out = {
    rounds: ROUNDS,
    seconds: DURATION,
    plain,
    extAuthzGrpc,
    perRound,
    throughputRatio: medianRatio(s, 'extAuthzGrpc', 'plain'),
    checks,
  };
  step(
    `  medians: plain ${plain.rps} req/s, ext_authz gRPC ${extAuthzGrpc.rps} req/s (ratio ${out.throughputRatio}), ${checks} Check calls`,
  );
  return out;
}

export function extAuthzGrpcMarkdown(e: ExtAuthzGrpc): string {
  const row = (name: string, t: Throughput) =>
    `| ${name} | ${t.rps} | ${t.p50} | ${t.p99} | ${t.errors} | ${t.non2xx} |`;
  return [
    '',
    '## ext_authz over gRPC against the plain path',
    '',
    `The proxy with envoy.filters.http.ext_authz (grpc_service.envoy_grpc → the ext-auth sample's Authorization/Check,`,
    `every request allowed) against the same proxy without it, closed loop, ${e.rounds} interleaved rounds of ${e.seconds} s`,
    '(medians over the rounds).',
    '',
    '| path | req/s | p50 ms | p99 ms | errors | non-2xx |',
    '|---|---|---|---|---|---|',
    row('plain proxy', e.plain),
    row('proxy + ext_authz gRPC', e.extAuthzGrpc),
    '',
    e.plain.rps > 0
      ? `Throughput with ext_authz over gRPC: ${Math.round(e.throughputRatio * 100)} % of the plain path's; ${e.checks} Check calls.`
      : `The plain path answered nothing (${e.plain.errors} errors): no ratio.`,
    '',
  ].join('\n');
}
