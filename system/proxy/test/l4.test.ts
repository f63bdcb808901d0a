// TCP and UDP proxying over ADS: a listener with the tcp_proxy network filter (bytes both ways, half-close, weighted
// clusters, no cluster → closed, connect failure → closed, idle timeout) and one with the udp_proxy listener filter
// (a session per client address, datagrams both ways, idle timeout), with Envoy's stats names
// (tcp.<stat_prefix>.*, udp.<stat_prefix>.*: Envoy's docs, configuration/listeners/network_filters/tcp_proxy_filter
// and udp_filters/udp_proxy), /stats/prometheus tags, /listeners and config_dump.
import dgram from 'node:dgram';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootstrapJson, cla, edsCluster, startTestProxy, type TestProxy } from '../testing/harness.ts';
import { startTestXdsServer, type TestXdsServer } from '../testing/xds-server.ts';

type J = Record<string, any>;

const TCP_PROXY = 'type.googleapis.com/envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy';
const UDP_PROXY = 'type.googleapis.com/envoy.extensions.filters.udp.udp_proxy.v3.UdpProxyConfig';
const UDP_ROUTE = 'type.googleapis.com/envoy.extensions.filters.udp.udp_proxy.v3.Route';

function tcpListener(name: string, proxy: J): J {
  return {
    name,
    address: { socket_address: { address: '127.0.0.1', port_value: 0 } },
    filter_chains: [
      { filters: [{ name: 'envoy.filters.network.tcp_proxy', typed_config: { '@type': TCP_PROXY, ...proxy } }] },
    ],
  };
}

function udpListener(name: string, cluster: string, extra: J = {}): J {
  return {
    name,
    address: { socket_address: { protocol: 'UDP', address: '127.0.0.1', port_value: 0 } },
    udp_listener_config: {},
    listener_filters: [
      {
        name: 'envoy.filters.udp_listener.udp_proxy',
        typed_config: {
          '@type': UDP_PROXY,
          stat_prefix: 'udp-test',
          matcher: { on_no_match: { action: { name: 'route', typed_config: { '@type': UDP_ROUTE, cluster } } } },
          ...extra,
        },
      },
    ],
  };
}

/** A TCP server answering each chunk upper-cased, then `|eof:<name>` once the client half-closed. */
function echoServer(name: string): Promise<net.Server> {
  const s = net.createServer({ allowHalfOpen: true }, (c) => {
    c.on('data', (d) => c.write(d.toString().toUpperCase()));
    c.on('end', () => c.end(`|eof:${name}`));
    c.on('error', () => {});
  });
  return new Promise((resolve) => s.listen(0, '127.0.0.1', () => resolve(s)));
}

const portOf = (s: net.Server) => (s.address() as net.AddressInfo).port;

/**
 * Connects, sends `text`, half-closes, and resolves with all it received once the connection closed (a reset counts
 * as closed: a proxy closing a connection whose bytes it never read makes the kernel send RST, Envoy's too).
 */
function exchange(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const c = net.connect({ host: '127.0.0.1', port, allowHalfOpen: true });
    let got = '';
    c.on('data', (d) => {
      got += d.toString();
    });
    c.on('connect', () => c.end(text));
    c.on('close', () => resolve(got));
    c.on('error', (e: NodeJS.ErrnoException) => (e.code === 'ECONNRESET' ? resolve(got) : reject(e)));
  });
}

function udpEcho(): Promise<dgram.Socket> {
  const s = dgram.createSocket('udp4');
  s.on('message', (m, r) => s.send(Buffer.from(m.toString().toUpperCase()), r.port, r.address));
  return new Promise((resolve) => s.bind(0, '127.0.0.1', () => resolve(s)));
}

/** Sends one datagram from a fresh client socket and resolves with the first answer. */
function udpAsk(port: number, text: string): Promise<{ reply: string; client: dgram.Socket }> {
  const client = dgram.createSocket('udp4');
  return new Promise((resolve) => {
    client.once('message', (m) => resolve({ reply: m.toString(), client }));
    client.send(text, port, '127.0.0.1');
  });
}

async function stat(proxy: TestProxy, name: string): Promise<number> {
  const r = await proxy.admin(`/stats?filter=${encodeURIComponent(`^${name.replace(/\./g, '\\.')}$`)}`);
  const m = r.body.match(/: (\d+)/);
  return m ? Number(m[1]) : Number.NaN;
}

async function until(f: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await f()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error('condition not met');
}

let xds: TestXdsServer;
let proxy: TestProxy;
let a: net.Server;
let b: net.Server;
let closedPort: number;
let udp: dgram.Socket;
const clients: dgram.Socket[] = [];

beforeAll(async () => {
  [a, b, udp] = await Promise.all([echoServer('a'), echoServer('b'), udpEcho()]);
  const gone = await echoServer('gone');
  closedPort = portOf(gone);
  await new Promise((r) => gone.close(r));
  xds = await startTestXdsServer();
  proxy = await startTestProxy(bootstrapJson({ xdsPort: xds.port }), { level: 'debug' });
  xds.setSnapshot('1', {
    clusters: ['a', 'b', 'closed', 'udp', 'empty'].map((n) => edsCluster(n)),
    endpoints: [
      cla('a', [['127.0.0.1', portOf(a)]]),
      cla('b', [['127.0.0.1', portOf(b)]]),
      cla('closed', [['127.0.0.1', closedPort]]),
      cla('udp', [['127.0.0.1', udp.address().port]]),
      cla('empty', []),
    ],
    listeners: [
      tcpListener('tcp-a', { stat_prefix: 'tcp-a', cluster: 'a' }),
      tcpListener('tcp-weighted', {
        stat_prefix: 'tcp-weighted',
        weighted_clusters: {
          clusters: [
            { name: 'a', weight: 1 },
            { name: 'b', weight: 1 },
          ],
        },
      }),
      tcpListener('tcp-blackhole', { stat_prefix: 'tcp-blackhole', cluster: 'blackhole-cluster' }),
      tcpListener('tcp-closed', { stat_prefix: 'tcp-closed', cluster: 'closed' }),
      tcpListener('tcp-empty', { stat_prefix: 'tcp-empty', cluster: 'empty' }),
      tcpListener('tcp-idle', { stat_prefix: 'tcp-idle', cluster: 'a', idle_timeout: '0.2s' }),
      udpListener('udp', 'udp', { idle_timeout: '0.3s' }),
    ],
  });
  await proxy.server.live;
});

afterAll(async () => {
  for (const c of clients) c.close();
  await proxy?.close();
  await xds?.close();
  for (const s of [a, b]) if (s) await new Promise((r) => s.close(r));
  udp?.close();
});

describe('tcp_proxy', () => {
  it('carries bytes both ways and passes a half-close on (the other direction keeps flowing)', async () => {
    expect(await exchange(proxy.port('tcp-a'), 'hello')).toBe('HELLO|eof:a');
    expect(await stat(proxy, 'tcp.tcp-a.downstream_cx_total')).toBe(1);
    expect(await stat(proxy, 'tcp.tcp-a.downstream_cx_rx_bytes_total')).toBe(5);
    expect(await stat(proxy, 'tcp.tcp-a.downstream_cx_tx_bytes_total')).toBe('HELLO|eof:a'.length);
    expect(await stat(proxy, 'cluster.a.upstream_cx_total')).toBe(1);
    expect(await stat(proxy, 'cluster.a.upstream_cx_tx_bytes_total')).toBe(5);
  });

  it('spreads connections over weighted_clusters', async () => {
    const seen = new Set<string>();
    for (let i = 0; i < 40 && seen.size < 2; i++) seen.add((await exchange(proxy.port('tcp-weighted'), 'x')).slice(-1));
    expect([...seen].sort()).toEqual(['a', 'b']);
  });

  it('closes the connection when the cluster does not exist (downstream_cx_no_route)', async () => {
    expect(await exchange(proxy.port('tcp-blackhole'), 'hello')).toBe('');
    expect(await stat(proxy, 'tcp.tcp-blackhole.downstream_cx_no_route')).toBe(1);
  });

  it('closes the connection when the upstream refuses it (upstream_cx_connect_fail)', async () => {
    expect(await exchange(proxy.port('tcp-closed'), 'hello')).toBe('');
    expect(await stat(proxy, 'cluster.closed.upstream_cx_connect_fail')).toBe(1);
  });

  it('closes the connection when the cluster has no healthy host (upstream_cx_none_healthy)', async () => {
    expect(await exchange(proxy.port('tcp-empty'), 'hello')).toBe('');
    expect(await stat(proxy, 'cluster.empty.upstream_cx_none_healthy')).toBe(1);
  });

  it('closes both sides after idle_timeout without bytes', async () => {
    const c = net.connect({ host: '127.0.0.1', port: proxy.port('tcp-idle') });
    await new Promise((resolve) => c.on('close', resolve));
    expect(await stat(proxy, 'tcp.tcp-idle.idle_timeout')).toBe(1);
  });

  it('shows in /listeners, config_dump and /stats/prometheus with Envoy tag names', async () => {
    expect((await proxy.admin('/listeners')).body).toContain(`tcp-a::127.0.0.1:${proxy.port('tcp-a')}`);
    const dump = JSON.parse((await proxy.admin('/config_dump?resource=dynamic_listeners')).body);
    const l = dump.configs.find((c: J) => c.name === 'tcp-a');
    expect(l.active_state.listener.filter_chains[0].filters[0].typed_config).toEqual({
      '@type': TCP_PROXY,
      stat_prefix: 'tcp-a',
      cluster: 'a',
    });
    const prom = (await proxy.admin('/stats/prometheus')).body;
    expect(prom).toMatch(/^envoy_tcp_downstream_cx_total\{envoy_tcp_prefix="tcp-a"\} 1$/m);
  });
});

describe('udp_proxy', () => {
  it('keeps a session per client address and carries datagrams both ways', async () => {
    const port = proxy.port('udp');
    const one = await udpAsk(port, 'ping');
    const two = await udpAsk(port, 'pong');
    clients.push(one.client, two.client);
    expect([one.reply, two.reply]).toEqual(['PING', 'PONG']);
    one.client.send('again', port, '127.0.0.1');
    expect((await new Promise<Buffer>((r) => one.client.once('message', r))).toString()).toBe('AGAIN');
    expect(await stat(proxy, 'udp.udp-test.downstream_sess_total')).toBe(2);
    expect(await stat(proxy, 'udp.udp-test.downstream_sess_rx_datagrams')).toBe(3);
    expect(await stat(proxy, 'udp.udp-test.downstream_sess_tx_datagrams')).toBe(3);
    expect(await stat(proxy, 'udp.udp-test.downstream_sess_rx_bytes')).toBe(13);
    expect(await stat(proxy, 'cluster.udp.udp.sess_rx_datagrams')).toBe(3);
    const prom = (await proxy.admin('/stats/prometheus')).body;
    expect(prom).toMatch(/^envoy_udp_downstream_sess_total\{envoy_udp_prefix="udp-test"\} 2$/m);
  });

  it('ends idle sessions after idle_timeout', async () => {
    await until(async () => (await stat(proxy, 'udp.udp-test.downstream_sess_active')) === 0);
    expect(await stat(proxy, 'udp.udp-test.idle_timeout')).toBe(2);
  });

  it('shows as a UDP listener in /listeners?format=json and config_dump', async () => {
    const ls = JSON.parse((await proxy.admin('/listeners?format=json')).body).listener_statuses;
    expect(ls.find((l: J) => l.name === 'udp').local_address.socket_address).toEqual({
      protocol: 'UDP',
      address: '127.0.0.1',
      port_value: proxy.port('udp'),
    });
    const dump = JSON.parse((await proxy.admin('/config_dump?resource=dynamic_listeners')).body);
    const l = dump.configs.find((c: J) => c.name === 'udp');
    expect(l.active_state.listener.listener_filters[0].typed_config['@type']).toBe(UDP_PROXY);
  });
});
