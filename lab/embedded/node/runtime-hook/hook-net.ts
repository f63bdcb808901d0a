// Pod runtime hook, network part: each pod gets two addresses of its own, as if it had a network namespace: its pod IP
// (127.<podOctet>.x.y), which other pods reach, and its pod loopback (127.<loopOctet>.x.y), which plays `lo`: only the
// pod itself and the kubelet's port-forward use it (lab/state.ts `podLoopback`).
// - listen on 127.0.0.1, ::1 or localhost binds the pod loopback only; listen on a wildcard (0.0.0.0, ::, or none) binds
//   the pod IP and the pod loopback (hook-listen.ts), as 0.0.0.0 includes lo in a pod;
// - connect(2) to 127.0.0.1/::1/0.0.0.0/:: goes to the pod loopback; connect to another pod's loopback is refused
//   (ECONNREFUSED), as nothing of another pod's lo is reachable in Kubernetes; connections to loopback destinations
//   leave from the pod loopback (to itself) or the pod IP (to anything else), so servers see the real peer;
// - ports below 1024 are shifted when the lab cannot bind them (portShift), on both sides.
// The rewrite of connect happens on the socket's native handle, at the moment the address is known (after any DNS
// lookup), so it covers IP literals and names, net, tls, http(s), http2, undici, fetch and grpc-js alike.
import dgram from 'node:dgram';
import net from 'node:net';
import { constants } from 'node:os';
import { installCompanionLifecycle, listenWithCompanion } from './hook-listen.ts';
import type { PodRuntimeConfig } from './runtime-config.ts';

const PATCHED = Symbol('gwlab.patched');

/** Addresses that mean "this host's lo" to a program and so mean "this pod's loopback" inside one. */
const LOOPBACK_LITERALS = new Set(['127.0.0.1', '::1', '0:0:0:0:0:0:0:1', '::ffff:127.0.0.1']);
/** Wildcard addresses: "every address of this host", i.e. the pod IP and the pod loopback. */
const WILDCARD_LITERALS = new Set(['0.0.0.0', '::', '::0', '0:0:0:0:0:0:0:0', '::ffff:0.0.0.0']);
const isLocal = (addr: string) => LOOPBACK_LITERALS.has(addr) || WILDCARD_LITERALS.has(addr);

/** libuv's code for a refused connection (negative errno on Linux), as the native connect returns it. */
const UV_ECONNREFUSED = -constants.errno.ECONNREFUSED;

export interface NetRewriter {
  /** Destination of a connect: local literals become the pod loopback; another pod's loopback is refused (null). */
  dest(addr: string): string | null;
  /** Source a connection to the loopback destination `dest` leaves from. */
  source(dest: string): string;
  /**
   * Addresses a TCP listen on `host` binds: the pod loopback for loopback names, the pod IP and the pod loopback for
   * a wildcard (`companion` set), anything else as written.
   */
  listen(host: unknown): { host: unknown; companion?: string };
  /** Host of a UDP bind: wildcard and local literals become the pod IP (sends are not rewritten; see README). */
  udpHost(host: unknown): unknown;
  port(addr: string, port: number): number;
}

export function netRewriter(cfg: PodRuntimeConfig): NetRewriter {
  const podIP = cfg.pod.ip;
  const loopback = cfg.pod.loopback;
  const shift = cfg.portShift;
  const octet = (addr: string) => (addr.startsWith('127.') ? Number(addr.split('.')[1]) : -1);
  const loopOctet = octet(loopback);
  /** False for a config without a pod loopback (readRuntimeConfig): 127.0.0.1 is then the pod IP, as it was. */
  const isolated = loopback !== podIP;
  const wildcard = (host: unknown) =>
    host === undefined || host === null || host === '' || (typeof host === 'string' && WILDCARD_LITERALS.has(host));
  return {
    dest: (addr) => {
      if (isLocal(addr)) return loopback;
      return isolated && octet(addr) === loopOctet && addr !== loopback ? null : addr;
    },
    source: (dest) => (dest === loopback ? loopback : podIP),
    listen: (host) => {
      if (wildcard(host)) return isolated ? { host: podIP, companion: loopback } : { host: podIP };
      if (typeof host === 'string' && (LOOPBACK_LITERALS.has(host) || host.toLowerCase() === 'localhost')) {
        return { host: loopback };
      }
      return { host };
    },
    udpHost: (host) =>
      wildcard(host) || (typeof host === 'string' && (isLocal(host) || host.toLowerCase() === 'localhost'))
        ? podIP
        : host,
    port: (addr, port) =>
      shift && port > 0 && port < shift.below && shift.octets.includes(octet(addr)) ? port + shift.offset : port,
  };
}

export function installNet(cfg: PodRuntimeConfig): void {
  const rw = netRewriter(cfg);
  installConnect(rw, cfg.pod.loopback);
  installListen(rw);
  installUdpBind(rw);
}

/** Rewrites a connecting socket's native handle: the destination (and source) at connect(2), after any lookup. */
function patchHandle(rw: NetRewriter, sock: any, bound: boolean): void {
  const h = sock._handle;
  if (!h || h[PATCHED] || typeof h.connect !== 'function') return;
  h[PATCHED] = true;
  const c4 = h.connect;
  const c6 = h.connect6;
  const rewrite = (handle: any, req: any, addr: string, port: number, orig: (...a: any[]) => number) => {
    const dest = rw.dest(addr);
    if (dest === null) return UV_ECONNREFUSED;
    if (!dest.startsWith('127.')) return orig.call(handle, req, addr, port);
    const p = rw.port(dest, port);
    if (!bound) {
      const err = handle.bind(rw.source(dest), 0);
      if (err) return err;
    }
    req.address = dest;
    req.port = p;
    return c4.call(handle, req, dest, p);
  };
  h.connect = function (req: any, addr: string, port?: number) {
    // Pipes (unix sockets) have connect(req, path): nothing to rewrite.
    if (typeof port !== 'number') return c4.call(this, req, addr);
    return rewrite(this, req, addr, port, c4);
  };
  if (typeof c6 === 'function') {
    h.connect6 = function (req: any, addr: string, port: number) {
      return rewrite(this, req, addr, port, c6);
    };
  }
}

/** A user-supplied lookup may answer 127.0.0.1 and ::1 for localhost: keep one answer, the pod loopback. */
function wrapLookup(lookup: (...a: any[]) => void, loopback: string) {
  return function (this: unknown, host: string, opts: any, cb: (...a: any[]) => void) {
    return lookup.call(this, host, opts, (err: unknown, addr: any, family?: number) => {
      if (err || !Array.isArray(addr)) {
        if (!err && typeof addr === 'string' && isLocal(addr)) return cb(null, loopback, 4);
        return cb(err, addr, family);
      }
      const mapped = addr.map((a: { address: string; family: number }) =>
        isLocal(a.address) ? { address: loopback, family: 4 } : a,
      );
      const loop = mapped.find((a: { address: string }) => a.address.startsWith('127.'));
      cb(null, loop ? [loop] : mapped);
    });
  };
}

/** net.Socket#connect: a user lookup wrapped, the native handle patched once the socket has one. */
function installConnect(rw: NetRewriter, loopback: string): void {
  const normalizeArgs = (net as any)._normalizeArgs as (args: unknown[]) => any[];
  const normalizedSym = Object.getOwnPropertySymbols(normalizeArgs([]))[0];
  const origConnect = net.Socket.prototype.connect;
  net.Socket.prototype.connect = function (this: any, ...args: unknown[]) {
    const normalized =
      Array.isArray(args[0]) && (args[0] as any)[normalizedSym] ? (args[0] as any[]) : normalizeArgs(args);
    const opts = normalized[0];
    if (opts && opts.path == null) {
      if (typeof opts.lookup === 'function' && !opts.lookup[PATCHED]) {
        const copy = { ...opts, lookup: wrapLookup(opts.lookup, loopback) };
        copy.lookup[PATCHED] = true;
        normalized[0] = copy;
      }
      const ret = origConnect.call(this, normalized as any);
      patchHandle(rw, this, !!(opts.localAddress || opts.localPort));
      return ret;
    }
    return origConnect.call(this, normalized as any);
  } as typeof net.Socket.prototype.connect;
}

/** net.Server#listen: loopback names bind the pod loopback, wildcards the pod IP plus a companion on the loopback. */
function installListen(rw: NetRewriter): void {
  const origListen = net.Server.prototype.listen;
  installCompanionLifecycle();
  net.Server.prototype.listen = function (this: net.Server, ...args: any[]) {
    const cb = typeof args[args.length - 1] === 'function' ? args.pop() : undefined;
    const a0 = args[0];
    let opts: Record<string, any> | undefined;
    if (a0 === undefined || a0 === null || typeof a0 === 'number' || (typeof a0 === 'string' && /^\d+$/.test(a0))) {
      opts = { port: a0 === undefined || a0 === null ? 0 : Number(a0) };
      if (typeof args[1] === 'string') {
        opts.host = args[1];
        if (args[2] !== undefined) opts.backlog = args[2];
      } else if (args[1] !== undefined) {
        opts.backlog = args[1];
      }
    } else if (
      typeof a0 === 'object' &&
      !a0._handle &&
      !a0.handle &&
      a0.fd === undefined &&
      a0.path === undefined &&
      !('onconnection' in a0) // a raw handle
    ) {
      opts = { ...a0 };
    }
    if (!opts) return (origListen as any).apply(this, cb ? [...args, cb] : args);
    const where = rw.listen(opts.host);
    opts.host = where.host;
    delete opts.ipv6Only;
    if (typeof opts.host === 'string' && opts.host.startsWith('127.')) {
      opts.port = rw.port(opts.host, Number(opts.port ?? 0));
    }
    if (where.companion) return listenWithCompanion(this, origListen as any, opts, cb, where.companion);
    return cb ? origListen.call(this, opts, cb) : origListen.call(this, opts);
  } as typeof net.Server.prototype.listen;
}

/** UDP: bind only (sends to 127.0.0.1 are not rewritten; see README). */
function installUdpBind(rw: NetRewriter): void {
  const origBind = dgram.Socket.prototype.bind;
  dgram.Socket.prototype.bind = function (this: dgram.Socket, ...args: any[]) {
    if ((this as any).type !== 'udp4') return (origBind as any).apply(this, args);
    if (args[0] && typeof args[0] === 'object') {
      args[0] = { ...args[0], address: rw.udpHost(args[0].address) };
    } else if (typeof args[1] === 'string' || args[1] === undefined || typeof args[1] === 'function') {
      const cb = typeof args[1] === 'function' ? args[1] : args[2];
      const address = typeof args[1] === 'string' ? args[1] : undefined;
      args = [args[0] ?? 0, rw.udpHost(address), ...(cb ? [cb] : [])];
    }
    return (origBind as any).apply(this, args);
  } as typeof dgram.Socket.prototype.bind;
}
