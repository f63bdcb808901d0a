// STRICT_DNS clusters end to end: a cluster whose endpoint is a hostname carries traffic to what the name resolves to,
// a name that does not resolve leaves the cluster without hosts (503 "no healthy upstream", as Envoy answers), and
// the names are resolved again every dns_refresh_rate, so a changed answer moves the traffic while a failed lookup
// keeps the last good hosts.
import dns from 'node:dns';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  eventually,
  httpRequest,
  listener,
  route,
  routeConfig,
  startXdsFixture,
  vhost,
  type XdsFixture,
} from '../testing/harness.ts';
import { startTestUpstream, type TestUpstream } from '../testing/upstream.ts';

type J = Record<string, any>;

const L = 'listener~8080';
/** A name only this test's resolver answers (`.test` is reserved: no real resolver will ever know it). */
const MOVING = 'backend.gwlab.test';
const MISSING = 'gwlab-no-such-host.invalid';

let fx: XdsFixture;
let a: TestUpstream;
let b: TestUpstream;

/**
 * The answers for MOVING: addresses, or an error code the lookup fails with. The proxy resolves through
 * dns.promises.lookup (getaddrinfo), whose answers a test cannot change; it is also the seam where the lab's pod
 * runtime hook plugs in cluster DNS, so the test answers MOVING there and hands every other name (`localhost`,
 * MISSING) to the system resolver untouched.
 */
let moving: string[] | string = [];
const lookups: string[] = [];

function dnsCluster(name: string, host: string, port: number, extra: J = {}): J {
  return {
    name,
    type: 'STRICT_DNS',
    connect_timeout: '1s',
    // The upstreams listen on IPv4 only; without it a resolver that also answers ::1 for localhost would give the
    // cluster a host nothing listens on.
    dns_lookup_family: 'V4_ONLY',
    load_assignment: {
      cluster_name: name,
      endpoints: [
        { lb_endpoints: [{ endpoint: { address: { socket_address: { address: host, port_value: port } } } }] },
      ],
    },
    ...extra,
  };
}

const get = (path: string) => httpRequest(`http://127.0.0.1:${fx.proxy.port(L)}${path}`, { host: 'www.example.com' });
const stat = (n: string) => fx.proxy.server.stats.value(n) ?? 0;
/** Which upstream answered (the test upstream's echo carries its name). */
const who = async (path: string) => {
  const r = await get(path);
  expect(r.status).toBe(200);
  return r.headers['x-upstream'] as string;
};
/** The hosts of a cluster as /clusters lists them: `address:port` → hostname. */
async function hosts(cluster: string): Promise<Record<string, string>> {
  const body = (await fx.proxy.admin('/clusters')).body;
  const out: Record<string, string> = {};
  for (const line of body.split('\n')) {
    const m = new RegExp(`^${cluster.replace(/[.]/g, '\\.')}::([^:]+:\\d+)::hostname::(.*)$`).exec(line);
    if (m) out[m[1]!] = m[2]!;
  }
  return out;
}

beforeAll(async () => {
  const system = dns.promises.lookup;
  vi.spyOn(dns.promises, 'lookup').mockImplementation(((hostname: string, options: dns.LookupAllOptions) => {
    lookups.push(hostname);
    if (hostname !== MOVING) return system(hostname, options);
    const answer = moving;
    if (typeof answer === 'string') {
      const err: NodeJS.ErrnoException = new Error(`getaddrinfo ${answer} ${hostname}`);
      err.code = answer;
      return Promise.reject(err);
    }
    return Promise.resolve(answer.map((address) => ({ address, family: 4 })));
  }) as typeof dns.promises.lookup);
  a = await startTestUpstream('a');
  // b on the same port at another loopback address: a name that moves from 127.0.0.1 to 127.0.0.2 keeps its port.
  b = await startTestUpstream('b', { host: '127.0.0.2', port: a.port });
  moving = ['127.0.0.1'];
  fx = await startXdsFixture();
  const res = await fx.apply({
    clusters: [
      dnsCluster('dns-localhost', 'localhost', a.port),
      dnsCluster('dns-missing', MISSING, a.port, { dns_refresh_rate: '0.2s' }),
      dnsCluster('dns-moving', MOVING, a.port, { dns_refresh_rate: '0.1s' }),
    ],
    listeners: [listener(L, 0, { rds: L })],
    routes: [
      routeConfig(L, [
        vhost(
          'www',
          ['www.example.com'],
          [route('/local', 'dns-localhost'), route('/missing', 'dns-missing'), route('/moving', 'dns-moving')],
        ),
      ]),
    ],
  });
  expect(res.nacks.map((n) => n.error_detail?.message)).toEqual([]);
  // STRICT_DNS clusters warm until their first resolution has finished, whatever its outcome (the CDS ACK above
  // came after all three entered warming).
  await eventually(() => stat('cluster_manager.warming_clusters') === 0, 10_000, 'the DNS clusters warmed');
});

afterAll(async () => {
  await fx?.close();
  await Promise.all([a?.close(), b?.close()]);
  vi.restoreAllMocks();
});

describe('STRICT_DNS clusters', () => {
  it('a hostname endpoint (localhost, the system resolver) carries traffic to the address it resolves to', async () => {
    expect(await who('/local/x')).toBe('a');
    expect(lookups).toContain('localhost');
    // Envoy's /clusters: the resolved address as the host, the name as its hostname.
    expect(await hosts('dns-localhost')).toEqual({ [`127.0.0.1:${a.port}`]: 'localhost' });
    expect(stat('cluster.dns-localhost.update_attempt')).toBeGreaterThanOrEqual(1);
    expect(stat('cluster.dns-localhost.update_success')).toBeGreaterThanOrEqual(1);
    expect(stat('cluster.dns-localhost.update_failure')).toBe(0);
    expect(stat('cluster.dns-localhost.membership_total')).toBe(1);
  });

  it('a name that does not resolve: the cluster has no host, 503 "no healthy upstream" (UH), and is retried', async () => {
    const r = await get('/missing/x');
    expect(r.status).toBe(503);
    expect(r.body).toBe('no healthy upstream');
    expect(fx.proxy.access.at(-1)).toMatch(/"GET \/missing\/x HTTP\/1\.1" 503 UH /);
    expect(stat('cluster.dns-missing.upstream_cx_none_healthy')).toBeGreaterThanOrEqual(1);
    expect(await hosts('dns-missing')).toEqual({});
    // dns_refresh_rate 0.2 s: the lookup is tried again (and fails again), as Envoy's resolve timer does.
    const failures = stat('cluster.dns-missing.update_failure');
    expect(failures).toBeGreaterThanOrEqual(1);
    await eventually(() => stat('cluster.dns-missing.update_failure') >= failures + 2, 5000, 'two more lookups');
    expect(stat('cluster.dns-missing.update_success')).toBe(0);
  });

  it('re-resolution every dns_refresh_rate: a new answer moves the traffic; failed lookups keep the last hosts', async () => {
    expect(await who('/moving/x')).toBe('a');
    expect(await hosts('dns-moving')).toEqual({ [`127.0.0.1:${a.port}`]: MOVING });

    // The name now points at b: within a few refreshes (0.1 s) every request goes there.
    moving = ['127.0.0.2'];
    await eventually(async () => (await who('/moving/x')) === 'b', 5000, 'traffic on b');
    expect(await hosts('dns-moving')).toEqual({ [`127.0.0.2:${b.port}`]: MOVING });
    const changes = stat('cluster.dns-moving.membership_change');

    // The resolver fails (a timeout, as when the DNS server is away): two failed rounds in a row, and still b.
    moving = 'EAI_AGAIN';
    const failed = stat('cluster.dns-moving.update_failure');
    await eventually(() => stat('cluster.dns-moving.update_failure') >= failed + 2, 5000, 'two failed lookups');
    const seen = new Set<string>();
    for (let i = 0; i < 5; i++) seen.add(await who('/moving/x'));
    expect([...seen]).toEqual(['b']);
    expect(await hosts('dns-moving')).toEqual({ [`127.0.0.2:${b.port}`]: MOVING });
    expect(stat('cluster.dns-moving.membership_change')).toBe(changes);

    // Two addresses: two hosts, round robin over both.
    moving = ['127.0.0.1', '127.0.0.2'];
    await eventually(() => stat('cluster.dns-moving.membership_total') === 2, 5000, 'two hosts');
    const both = new Set<string>();
    for (let i = 0; i < 6; i++) both.add(await who('/moving/x'));
    expect([...both].sort()).toEqual(['a', 'b']);
    expect(await hosts('dns-moving')).toEqual({
      [`127.0.0.1:${a.port}`]: MOVING,
      [`127.0.0.2:${b.port}`]: MOVING,
    });
  });
});
