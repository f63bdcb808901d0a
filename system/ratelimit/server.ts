// The rate-limit sample: a global rate-limit service for Envoy's ratelimit filter,
// envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit over gRPC (@grpc/grpc-js, the Envoy protos of
// shared/envoy/protos.ts), with in-memory counters. Limits are rules `<domain>:<key>[=<value>]:<N>/<unit>`: a
// descriptor with an entry of that key (and value, when the rule names one) is counted against the rule's limit in
// fixed windows of the unit, one counter per distinct descriptor (every entry's key=value), as envoyproxy/ratelimit
// counts (a request is over the limit once the window's count passes N; overall_code OVER_LIMIT if any descriptor
// is). Descriptors no rule matches are OK and uncounted. The counters are readable over HTTP: GET /counters (JSON),
// GET /rules.
import * as grpc from '@grpc/grpc-js';
import { envoyService } from '../shared/envoy/protos.ts';
import { bindGrpc, shutdownGrpc } from '../shared/grpc-listen.ts';
import { type Logger, LogRegistry } from '../shared/log.ts';
import { type ListeningService, listenHttp } from '../shared/sample-service.ts';

export const UNITS = { second: 1_000, minute: 60_000, hour: 3_600_000, day: 86_400_000 } as const;
export type Unit = keyof typeof UNITS;

export interface Rule {
  domain: string;
  key: string;
  value?: string;
  requestsPerUnit: number;
  unit: Unit;
}

/** `gwlab:generic_key=api:3/minute` → a Rule; throws with the expected form. */
export function parseRule(text: string): Rule {
  const m = /^([^:]+):([^:=]+)(?:=([^:]*))?:(\d+)\/(second|minute|hour|day)$/.exec(text);
  if (!m)
    throw new Error(`--rule ${JSON.stringify(text)}: expected <domain>:<key>[=<value>]:<N>/<second|minute|hour|day>`);
  return {
    domain: m[1]!,
    key: m[2]!,
    ...(m[3] !== undefined ? { value: m[3] } : {}),
    requestsPerUnit: Number(m[4]),
    unit: m[5] as Unit,
  };
}

export interface Counter {
  domain: string;
  /** The descriptor's entries as `key=value` joined with `, `. */
  descriptor: string;
  rule: string;
  unit: Unit;
  windowStart: string;
  hits: number;
  limit: number;
  overLimit: number;
}

export interface RateLimitOptions {
  host?: string;
  /** gRPC port (0: any free one). */
  grpcPort?: number;
  /** HTTP port of /counters (0: any free one). */
  httpPort?: number;
  rules: Rule[];
  log?: 'stdout' | false | ((line: string) => void);
  /** The clock (tests). */
  now?: () => number;
}

export type RateLimitService = ListeningService & { grpcPort: number };

/** The service definition of RateLimitService (the sample serves it; tests call it with it). */
export function rateLimitService(): grpc.ServiceDefinition {
  return envoyService('envoy/service/ratelimit/v3/rls.proto', 'envoy.service.ratelimit.v3.RateLimitService', {
    longs: Number,
  });
}

const ruleText = (r: Rule) =>
  `${r.domain}:${r.key}${r.value !== undefined ? `=${r.value}` : ''}:${r.requestsPerUnit}/${r.unit}`;

/** The counters and the decision, apart from the transport. */
export class Limiter {
  readonly rules: Rule[];
  private readonly now: () => number;
  private readonly counters = new Map<string, Counter>();

  constructor(rules: Rule[], now: () => number = Date.now) {
    this.rules = rules;
    this.now = now;
  }

  /** One descriptor's status, counting `hits` against the first rule that matches it. */
  check(domain: string, entries: { key: string; value: string }[], hits: number) {
    const rule = this.rules.find(
      (r) =>
        r.domain === domain && entries.some((e) => e.key === r.key && (r.value === undefined || e.value === r.value)),
    );
    if (!rule) return { code: 'OK' as const };
    const descriptor = entries.map((e) => `${e.key}=${e.value}`).join(', ');
    const ms = UNITS[rule.unit];
    const start = Math.floor(this.now() / ms) * ms;
    const id = `${domain}|${descriptor}|${ruleText(rule)}`;
    let c = this.counters.get(id);
    if (!c || c.windowStart !== new Date(start).toISOString()) {
      c = {
        domain,
        descriptor,
        rule: ruleText(rule),
        unit: rule.unit,
        windowStart: new Date(start).toISOString(),
        hits: 0,
        limit: rule.requestsPerUnit,
        overLimit: 0,
      };
      this.counters.set(id, c);
    }
    c.hits += hits;
    const over = c.hits > rule.requestsPerUnit;
    if (over) c.overLimit += hits;
    return {
      code: over ? ('OVER_LIMIT' as const) : ('OK' as const),
      current_limit: { requests_per_unit: rule.requestsPerUnit, unit: rule.unit.toUpperCase() },
      limit_remaining: Math.max(0, rule.requestsPerUnit - c.hits),
      duration_until_reset: { seconds: Math.ceil((start + ms - this.now()) / 1000) },
    };
  }

  list(): Counter[] {
    return [...this.counters.values()];
  }
}

export async function startRateLimit(opts: RateLimitOptions): Promise<RateLimitService> {
  const host = opts.host ?? '127.0.0.1';
  const logOpt = opts.log ?? 'stdout';
  const registry = new LogRegistry({
    level: logOpt === false ? 'off' : 'info',
    sink: typeof logOpt === 'function' ? logOpt : undefined,
  });
  const log = registry.logger('ratelimit');
  const limiter = new Limiter(opts.rules, opts.now);
  const http = await listenHttp(
    'ratelimit',
    (req, res) => {
      const path = (req.url ?? '/').split('?')[0];
      const body = path === '/counters' ? limiter.list() : path === '/rules' ? limiter.rules.map(ruleText) : undefined;
      if (body === undefined) {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: try /counters or /rules\n');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body, null, 2) + '\n');
    },
    { host, port: opts.httpPort ?? 0 },
  );
  const server = new grpc.Server();
  server.addService(rateLimitService(), { ShouldRateLimit: shouldRateLimit(limiter, log) });
  const grpcPort = await bindGrpc(server, host, opts.grpcPort ?? 0).catch(async (e) => {
    await http.close();
    throw e;
  });
  log.info('listening', { host, grpcPort, httpPort: http.port, rules: limiter.rules.map(ruleText) });
  return {
    ...http,
    grpcPort,
    close: async () => {
      await Promise.all([http.close(), shutdownGrpc(server)]);
    },
  };
}

function shouldRateLimit(limiter: Limiter, log: Logger) {
  return (call: grpc.ServerUnaryCall<any, any>, done: grpc.sendUnaryData<any>) => {
    const req = call.request ?? {};
    const domain = String(req.domain ?? '');
    const hits = Number(req.hits_addend) || 1;
    const statuses = ((req.descriptors ?? []) as any[]).map((d) =>
      limiter.check(
        domain,
        ((d.entries ?? []) as any[]).map((e) => ({ key: String(e.key), value: String(e.value) })),
        hits,
      ),
    );
    const over = statuses.some((s) => s.code === 'OVER_LIMIT');
    log.info(over ? 'over limit' : 'ok', {
      domain,
      descriptors: ((req.descriptors ?? []) as any[]).map((d) =>
        ((d.entries ?? []) as any[]).map((e) => `${e.key}=${e.value}`).join(', '),
      ),
    });
    done(null, { overall_code: over ? 'OVER_LIMIT' : 'OK', statuses });
  };
}
