// bench:proxy's "retries and CORS cost nothing on routes that do not use them" phase (issue 19, "Done when"): the
// measured route (www-target) with neither a retry policy nor a CORS policy, in two proxies that differ only around
// it: `without`, a route table where no route retries and no cors filter is in the chain; `with`, the same table where
// every other route has a retry_policy (retriable-status-codes, retry_back_off) and a per-route CorsPolicy, and the
// HCM runs envoy.filters.http.cors — what a Gateway serving HTTPRoute retry and CORS filters on its other routes
// gets. Both loaded at once in each round (side-by-side.ts `concurrent`: the machine's swings weigh on both alike;
// one after the other, rounds of one configuration differed by ±20% here) → with/without throughput, the median of
// the rounds, and each proxy's CPU µs per request.
import { progress } from '../shared/reports.ts';
import { proxyBootstrap } from './route-table.ts';
import { type Servers, startProxyProcess } from './servers.ts';
import { CONNECTIONS, DURATION, type J } from './settings.ts';
import { medianRatio, proxiesSideBySide, type SideBySide } from './side-by-side.ts';

const step = progress('proxy');
const ROUNDS = Number(process.env.BENCH_FEATURE_ROUNDS ?? 4);
/** "Cost nothing", within what a closed loop on this machine can tell apart. */
export const FEATURE_COST_MIN_RATIO = 0.95;
const TARGET = 'www-target';
const CORS = 'envoy.filters.http.cors';

export interface FeatureCost extends SideBySide<'without' | 'with'> {
  rounds: number;
  /** with / without, the median of the rounds' ratios. */
  ratio: number;
  /** Routes that retry and have a CORS policy in the `with` table (all but the measured one). */
  featuredRoutes: number;
}

function routesOf(b: J): { hcm: J; routes: J[] } {
  const hcm = b.static_resources.listeners[0].filter_chains[0].filters[0].typed_config;
  return { hcm, routes: hcm.route_config.virtual_hosts.flatMap((v: J) => v.routes) };
}

/** The bench's table with no retry policy anywhere and no cors filter. */
function withoutBootstrap(appPort: number): J {
  const b = proxyBootstrap(appPort);
  const { hcm, routes } = routesOf(b);
  for (const r of routes) delete r.route.retry_policy;
  hcm.http_filters = hcm.http_filters.filter((f: J) => f.name !== CORS);
  return b;
}

/** The bench's table with a retry policy and a CORS policy on every route but the measured one. */
function withBootstrap(appPort: number): { bootstrap: J; featured: number } {
  const b = proxyBootstrap(appPort);
  const { hcm, routes } = routesOf(b);
  if (!hcm.http_filters.some((f: J) => f.name === CORS)) throw new Error('the bench bootstrap has no cors filter');
  let featured = 0;
  for (const r of routes) {
    if (r.name === TARGET) {
      delete r.route.retry_policy;
      continue;
    }
    r.route.retry_policy = {
      retry_on: 'retriable-status-codes,connect-failure,reset',
      retriable_status_codes: [500, 503],
      num_retries: 3,
      retry_back_off: { base_interval: '0.025s' },
    };
    r.typed_per_filter_config = {
      [CORS]: {
        '@type': 'type.googleapis.com/envoy.extensions.filters.http.cors.v3.CorsPolicy',
        allow_origin_string_match: [{ exact: 'https://app.example.com' }],
        allow_methods: 'GET,PUT',
        max_age: '600',
      },
    };
    featured++;
  }
  return { bootstrap: b, featured };
}

export async function featureCostPhase(servers: Servers, dir: string): Promise<FeatureCost> {
  step(
    `retries and CORS on the other routes vs none, a route without either: ${ROUNDS} rounds of ${DURATION} s, both loaded at once (${CONNECTIONS} connections each)`,
  );
  const w = withBootstrap(servers.appPort);
  const without = await startProxyProcess(withoutBootstrap(servers.appPort), dir, 'feature-without');
  const withFeatures = await startProxyProcess(w.bootstrap, dir, 'feature-with');
  try {
    const s = await proxiesSideBySide({ without, with: withFeatures }, { rounds: ROUNDS, seconds: DURATION });
    const out = { ...s, rounds: ROUNDS, ratio: medianRatio(s, 'with', 'without'), featuredRoutes: w.featured };
    step(
      `  with/without ${out.ratio} (${s.median.with.rps} against ${s.median.without.rps} req/s); CPU µs/request ${s.median.without.cpuUs} → ${s.median.with.cpuUs}`,
    );
    return out;
  } finally {
    without.child.kill('SIGKILL');
    withFeatures.child.kill('SIGKILL');
  }
}

export function featureCostChecks(f: FeatureCost): [string, boolean, string][] {
  return [
    [
      'retries and CORS on other routes cost a route without them nothing (≥ 95% of the throughput without)',
      f.ratio >= FEATURE_COST_MIN_RATIO,
      `with/without ${f.ratio} (${f.median.with.rps} against ${f.median.without.rps} req/s; rounds ${f.perRound.map((r) => (r.without.rps ? (r.with.rps / r.without.rps).toFixed(2) : '-')).join(', ')}); the proxy's CPU µs/request ${f.median.without.cpuUs} without, ${f.median.with.cpuUs} with`,
    ],
  ];
}

export function featureCostSection(f: FeatureCost): string[] {
  return [
    `## Retries and CORS on other routes: ${f.rounds} rounds of ${DURATION} s, both proxies loaded at once (${CONNECTIONS} connections each)`,
    '',
    `The measured route has neither; \`with\`: the other ${f.featuredRoutes} routes retry (retriable-status-codes, back-off) and carry a CORS policy, and the cors filter runs on every request; \`without\`: no route retries and no cors filter. Medians over the rounds.`,
    '',
    '| round | without req/s | with req/s | with/without | without CPU µs/req | with CPU µs/req |',
    '|---|---|---|---|---|---|',
    ...f.perRound.map(
      (r, i) =>
        `| ${i + 1} | ${r.without.rps} | ${r.with.rps} | ${r.without.rps ? (r.with.rps / r.without.rps).toFixed(2) : '-'} | ${r.without.cpuUs} | ${r.with.cpuUs} |`,
    ),
    `| median | ${f.median.without.rps} | ${f.median.with.rps} | ${f.ratio} | ${f.median.without.cpuUs} | ${f.median.with.cpuUs} |`,
    '',
  ];
}
