// The service proxy (kube-proxy's role), running in the lab process: for every Service port, a TCP relay on the
// ClusterIP (and on the LoadBalancer IP) that balances connections round-robin over the ready endpoints, and for a
// UDP port a datagram relay that does the same per client address (udp-relay.ts).
// Relays are plain socket-to-socket pipes with Nagle off: no per-chunk work beyond what stream.pipe does, so the
// throughput stays at that of a bare Node relay (see bench/relay.ts).
//
// Ports that cannot be bound: a ClusterIP port below 1024 in an unprivileged lab is shifted deterministically by
// `lowPortShift` (the pod hook shifts connects the same way); a LoadBalancer port that fails to bind (or every LB
// port when `forceLbPortFallback` is set) is served on p+8000, reported by a 'bind' event so the LoadBalancer
// controller writes the annotation `gwlab.dev/lb-port-<p>` and an event.
import { EventEmitter } from 'node:events';
import net from 'node:net';
import { UdpRelay } from './udp-relay.ts';

export const LB_PORT_FALLBACK_OFFSET = 8000;
export const lbPortAnnotation = (port: number) => `gwlab.dev/lb-port-${port}`;

export interface ServicePortSpec {
  /** Service port name ('' for a single unnamed port); endpoints are keyed by it, as in EndpointSlices. */
  name: string;
  port: number;
  protocol?: string;
}

export interface EndpointAddress {
  ip: string;
  port: number;
}

export interface ServiceSpec {
  namespace: string;
  name: string;
  /** null or 'None' for headless Services: no relay. */
  clusterIP?: string | null;
  /** status.loadBalancer.ingress[0].ip, once the LoadBalancer controller assigned it. */
  loadBalancerIP?: string | null;
  ports: ServicePortSpec[];
  /** Ready endpoints per port name. */
  endpoints: Record<string, EndpointAddress[]>;
}

export type RelayKind = 'clusterIP' | 'loadBalancer';

export interface PortBinding {
  kind: RelayKind;
  ip: string;
  /** The Service port as written. */
  port: number;
  /** The port really served (port, or port+8000 after a fallback/shift). */
  boundPort?: number;
  fallback: boolean;
  /** Why the port is not served (both the port and its fallback failed). */
  error?: string;
}

export interface BindEvent extends PortBinding {
  namespace: string;
  name: string;
  /** Why the fallback was used: 'Forced', 'EACCES', 'EADDRINUSE', 'Shifted'. */
  reason?: string;
}

export interface ServiceProxyOptions {
  /** Serve every LoadBalancer port p on p+8000 (the lab flag that makes the fallback testable). */
  forceLbPortFallback?: boolean;
  /** Unprivileged lab: ClusterIP ports below `below` are served at port+offset (mirrors the pod hook's portShift). */
  lowPortShift?: { below: number; offset: number } | null;
  log?: {
    debug(msg: string, f?: object): void;
    info(msg: string, f?: object): void;
    warn(msg: string, f?: object): void;
  };
  /** Connect attempts over other endpoints when one refuses (default: every endpoint once). */
  maxAttempts?: number;
}

interface Relay {
  key: string;
  kind: RelayKind;
  ip: string;
  port: number;
  portName: string;
  protocol: 'TCP' | 'UDP';
  server?: net.Server;
  udp?: UdpRelay;
  binding: PortBinding;
  svcKey: string;
}

const protocolOf = (p: ServicePortSpec) => ((p.protocol ?? 'TCP').toUpperCase() === 'UDP' ? 'UDP' : 'TCP');
const relayed = (p: ServicePortSpec) => ['TCP', 'UDP'].includes((p.protocol ?? 'TCP').toUpperCase());

interface Pool {
  endpoints: EndpointAddress[];
  next: number;
}

export class ServiceProxy extends EventEmitter {
  private readonly opts: ServiceProxyOptions;
  private readonly relays = new Map<string, Relay>();
  /** `<ns>/<name>/<portName>` → endpoints; shared by the ClusterIP and LB relays of a port. */
  private readonly pools = new Map<string, Pool>();
  private readonly specs = new Map<string, ServiceSpec>();
  private readonly sockets = new Set<net.Socket>();
  /** Serialises apply/remove per Service, so bind/close never race. */
  private readonly queues = new Map<string, Promise<unknown>>();
  private stopped = false;

  constructor(opts: ServiceProxyOptions = {}) {
    super();
    this.opts = opts;
  }

  /** Reconciles the relays of one Service with `spec`; resolves with its port bindings. */
  apply(spec: ServiceSpec): Promise<PortBinding[]> {
    const svcKey = `${spec.namespace}/${spec.name}`;
    return this.enqueue(svcKey, () => this.doApply(svcKey, spec));
  }

  remove(namespace: string, name: string): Promise<void> {
    const svcKey = `${namespace}/${name}`;
    return this.enqueue(svcKey, async () => {
      this.specs.delete(svcKey);
      for (const k of [...this.pools.keys()]) if (k.startsWith(svcKey + '/')) this.pools.delete(k);
      await Promise.all([...this.relays.values()].filter((r) => r.svcKey === svcKey).map((r) => this.closeRelay(r)));
    });
  }

  /** The current bindings of a Service (the LB controller reads fallbacks from here too). */
  bindings(namespace: string, name: string): PortBinding[] {
    const svcKey = `${namespace}/${name}`;
    return [...this.relays.values()].filter((r) => r.svcKey === svcKey).map((r) => ({ ...r.binding }));
  }

  /** Closes every relay and every relayed connection. */
  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.allSettled([...this.queues.values()]);
    await Promise.all([...this.relays.values()].map((r) => this.closeRelay(r)));
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
  }

  private enqueue<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.queues.get(key) ?? Promise.resolve();
    const next = prev.then(fn, fn);
    const tail = next.catch(() => undefined);
    this.queues.set(key, tail);
    void tail.then(() => {
      if (this.queues.get(key) === tail) this.queues.delete(key);
    });
    return next;
  }

  private async doApply(svcKey: string, spec: ServiceSpec): Promise<PortBinding[]> {
    if (this.stopped) throw new Error('ServiceProxy is stopped');
    this.specs.set(svcKey, spec);
    // Endpoints first: new relays must find their pool.
    const portNames = new Set(spec.ports.filter(relayed).map((p) => p.name));
    for (const k of [...this.pools.keys()]) {
      if (k.startsWith(svcKey + '/') && !portNames.has(k.slice(svcKey.length + 1))) this.pools.delete(k);
    }
    for (const name of portNames) {
      const eps = spec.endpoints[name] ?? [];
      const pool = this.pools.get(`${svcKey}/${name}`);
      if (pool) {
        pool.endpoints = eps;
        if (pool.next >= eps.length) pool.next = 0;
      } else {
        this.pools.set(`${svcKey}/${name}`, { endpoints: eps, next: 0 });
      }
    }
    // Wanted relays.
    const wanted = new Map<
      string,
      { kind: RelayKind; ip: string; port: number; portName: string; protocol: 'TCP' | 'UDP' }
    >();
    for (const p of spec.ports) {
      if (!relayed(p)) continue;
      const protocol = protocolOf(p);
      // TCP keys as before (a relay survives an update); UDP ones apart, so one port number may carry both.
      const suffix = protocol === 'UDP' ? '|UDP' : '';
      if (spec.clusterIP && spec.clusterIP !== 'None') {
        wanted.set(`${svcKey}|clusterIP|${spec.clusterIP}|${p.port}${suffix}`, {
          kind: 'clusterIP',
          ip: spec.clusterIP,
          port: p.port,
          portName: p.name,
          protocol,
        });
      }
      if (spec.loadBalancerIP) {
        wanted.set(`${svcKey}|loadBalancer|${spec.loadBalancerIP}|${p.port}${suffix}`, {
          kind: 'loadBalancer',
          ip: spec.loadBalancerIP,
          port: p.port,
          portName: p.name,
          protocol,
        });
      }
    }
    const closing: Promise<void>[] = [];
    for (const r of this.relays.values()) {
      if (r.svcKey === svcKey && !wanted.has(r.key)) closing.push(this.closeRelay(r));
    }
    await Promise.all(closing);
    const opening: Promise<void>[] = [];
    for (const [key, w] of wanted) {
      const existing = this.relays.get(key);
      if (existing) {
        existing.portName = w.portName; // a renamed port keeps its listener
        continue;
      }
      opening.push(
        this.openRelay({ key, svcKey, ...w, binding: { kind: w.kind, ip: w.ip, port: w.port, fallback: false } }),
      );
    }
    await Promise.all(opening);
    return this.bindings(spec.namespace, spec.name);
  }

  private async openRelay(relay: Relay): Promise<void> {
    this.relays.set(relay.key, relay);
    const [ns, name] = relay.svcKey.split('/');
    const shift = this.opts.lowPortShift;
    let first = relay.port;
    let reason: string | undefined;
    if (relay.kind === 'clusterIP' && shift && relay.port < shift.below) {
      first = relay.port + shift.offset;
      reason = 'Shifted';
    }
    if (relay.kind === 'loadBalancer' && this.opts.forceLbPortFallback) {
      first = relay.port + LB_PORT_FALLBACK_OFFSET;
      reason = 'Forced';
    }
    let err = await this.listen(relay, first);
    if (err && relay.kind === 'loadBalancer' && first === relay.port) {
      reason = err.code ?? 'BindError';
      this.opts.log?.warn('cannot bind the LoadBalancer port, falling back', {
        service: relay.svcKey,
        ip: relay.ip,
        port: relay.port,
        fallbackPort: relay.port + LB_PORT_FALLBACK_OFFSET,
        error: err.message,
      });
      first = relay.port + LB_PORT_FALLBACK_OFFSET;
      err = await this.listen(relay, first);
    }
    if (err) {
      relay.binding = { ...relay.binding, error: `listen ${relay.ip}:${first}: ${err.message}` };
      this.opts.log?.warn('cannot serve a Service port', { service: relay.svcKey, ...relay.binding });
    } else {
      relay.binding = { ...relay.binding, boundPort: first, fallback: first !== relay.port };
      this.opts.log?.debug('relay up', { service: relay.svcKey, ...relay.binding });
    }
    const ev: BindEvent = {
      namespace: ns,
      name,
      ...relay.binding,
      ...(reason && first !== relay.port ? { reason } : {}),
    };
    this.emit('bind', ev);
  }

  private listen(relay: Relay, port: number): Promise<NodeJS.ErrnoException | undefined> {
    if (relay.protocol === 'UDP') {
      const udp = new UdpRelay(() => this.nextEndpoint(relay));
      return udp.listen(relay.ip, port).then((err) => {
        if (!err) relay.udp = udp;
        return err;
      });
    }
    const server = net.createServer({ allowHalfOpen: true, noDelay: true, pauseOnConnect: true }, (sock) =>
      this.onConnection(relay, sock),
    );
    return new Promise((resolve) => {
      server.once('error', (err: NodeJS.ErrnoException) => resolve(err));
      server.listen({ host: relay.ip, port, exclusive: true }, () => {
        server.removeAllListeners('error');
        server.on('error', (e) => this.opts.log?.warn('relay error', { service: relay.svcKey, error: String(e) }));
        relay.server = server;
        resolve(undefined);
      });
    });
  }

  /** The next ready endpoint of the relay's port, round-robin; undefined when there is none. */
  private nextEndpoint(relay: Relay): EndpointAddress | undefined {
    const pool = this.pools.get(`${relay.svcKey}/${relay.portName}`);
    if (!pool?.endpoints.length) return undefined;
    const ep = pool.endpoints[pool.next % pool.endpoints.length];
    pool.next = (pool.next + 1) % pool.endpoints.length;
    return ep;
  }

  private closeRelay(relay: Relay): Promise<void> {
    if (this.relays.get(relay.key) === relay) this.relays.delete(relay.key);
    const udp = relay.udp;
    relay.udp = undefined;
    if (udp) return udp.close();
    const server = relay.server;
    relay.server = undefined;
    if (!server) return Promise.resolve();
    // Established connections keep flowing, as with kube-proxy; only the listener goes.
    return new Promise((r) => server.close(() => r()));
  }

  private onConnection(relay: Relay, client: net.Socket): void {
    const pool = this.pools.get(`${relay.svcKey}/${relay.portName}`);
    const n = pool?.endpoints.length ?? 0;
    if (!pool || n === 0) {
      // No ready endpoint: refuse, as kube-proxy's REJECT rule does.
      client.resetAndDestroy();
      return;
    }
    this.sockets.add(client);
    client.once('close', () => this.sockets.delete(client));
    client.on('error', () => undefined);
    const attempts = Math.min(n, this.opts.maxAttempts ?? n);
    const tryConnect = (left: number) => {
      if (pool.endpoints.length === 0) return client.resetAndDestroy();
      const ep = pool.endpoints[pool.next % pool.endpoints.length];
      pool.next = (pool.next + 1) % pool.endpoints.length;
      const upstream = net.connect({ host: ep.ip, port: ep.port, allowHalfOpen: true, noDelay: true });
      const onEarlyError = () => {
        upstream.destroy();
        if (left > 1 && !client.destroyed) tryConnect(left - 1);
        else client.resetAndDestroy();
      };
      upstream.once('error', onEarlyError);
      upstream.once('connect', () => {
        upstream.off('error', onEarlyError);
        this.sockets.add(upstream);
        upstream.once('close', () => this.sockets.delete(upstream));
        upstream.on('error', () => client.destroy());
        client.on('error', () => upstream.destroy());
        // A clean close of one side reaches the other through pipe's end(); destroying here would drop the
        // writes still queued on it.
        client.once('close', (hadError) => hadError && upstream.destroy());
        upstream.once('close', (hadError) => hadError && client.destroy());
        client.pipe(upstream);
        upstream.pipe(client);
        client.resume();
      });
    };
    tryConnect(attempts);
  }
}
