// `system/main.ts ratelimit [--port 8081] [--http-port 8080] [--host 0.0.0.0] --rule <domain>:<key>[=<value>]:<N>/<unit>...`:
// the rate-limit sample (server.ts) as a pod's process: RateLimitService/ShouldRateLimit over gRPC on --port, its
// counters over HTTP on --http-port (GET /counters, GET /rules).
import { parseArgs } from 'node:util';
import { stopOnSignals } from '../shared/sample-service.ts';
import { parseRule, startRateLimit } from './server.ts';

export type { RateLimitOptions, RateLimitService, Rule } from './server.ts';
export { Limiter, parseRule, rateLimitService, startRateLimit } from './server.ts';

const USAGE = `usage: ratelimit [--port 8081] [--http-port 8080] [--host 0.0.0.0] --rule <domain>:<key>[=<value>]:<N>/<unit>...
  envoy.service.ratelimit.v3.RateLimitService over gRPC on --port, in-memory counters per descriptor;
  GET /counters and GET /rules on --http-port; unit: second | minute | hour | day`;

function port(text: string, flag: string): number {
  if (!/^\d{1,5}$/.test(text) || Number(text) > 65535) {
    throw new Error(`${flag}: expected a port number from 0 to 65535, got ${JSON.stringify(text)}`);
  }
  return Number(text);
}

export async function main(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      port: { type: 'string', default: '8081' },
      'http-port': { type: 'string', default: '8080' },
      host: { type: 'string', default: '0.0.0.0' },
      rule: { type: 'string', multiple: true, default: [] },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
    allowPositionals: false,
  });
  if (values.help) {
    process.stdout.write(USAGE + '\n');
    return;
  }
  const server = await startRateLimit({
    host: values.host,
    grpcPort: port(values.port, '--port'),
    httpPort: port(values['http-port'], '--http-port'),
    rules: values.rule.map(parseRule),
    log: 'stdout',
  });
  stopOnSignals(server.close);
}
