// Pod runtime hook, network part: each pod gets its own loopback address as if it had a network namespace.
// - listen on a wildcard or local address (0.0.0.0, ::, 127.0.0.1, ::1, localhost, or none) binds the pod IP instead;
// - connect(2) to 127.0.0.1/::1/0.0.0.0 goes to the pod IP, and every connection to a loopback destination leaves from
//   the pod IP, so servers see the real peer;
// - ports below 1024 are shifted when the lab cannot bind them (portShift), on both sides.
// The rewrite of connect happens on the socket's native handle, at the moment the address is known (after any DNS
// lookup), so it covers IP literals and names, net, tls, http(s), http2, undici, fetch and grpc-js alike.
import dgram from 'node:dgram';
import net from 'node:net';
import type { PodRuntimeConfig } from './runtime-config.ts';

const PATCHED = Symbol('gwlab.patched');

/** Addresses that mean "this host" to a program and so mean "this pod" inside one. */
const LOCAL_LITERALS = new Set([
  '127.0.0.1',
  '::1',
  '0.0.0.0',
  '::',
  '::0',
  '0:0:0:0:0:0:0:0',
  '0:0:0:0:0:0:0:1',
  '::ffff:127.0.0.1',
  '::ffff:0.0.0.0',
]);

export interface NetRewriter {
  /** Destination of a connect: local literals become the pod IP. */
  dest(addr: string): string;
  /** Host of a listen: wildcard, local literals and localhost become the pod IP. */
  listenHost(host: unknown): unknown;
  port(addr: string, port: number): number;
}

export function netRewriter(cfg: PodRuntimeConfig): NetRewriter {
  const podIP = cfg.pod.ip;
  const shift = cfg.portShift;
  const octet = (addr: string) => (addr.startsWith('127.') ? Number(addr.split('.')[1]) : -1);
  return {
    dest: (addr) => (LOCAL_LITERALS.has(addr) ? podIP : addr),
    listenHost: (host) =>
      host === undefined ||
      host === null ||
      host === '' ||
      (typeof host === 'string' && (LOCAL_LITERALS.has(host) || host.toLowerCase() === 'localhost'))
        ? podIP
        : host,
    port: (addr, port) =>
      shift && port > 0 && port < shift.below && shift.octets.includes(octet(addr)) ? port + shift.offset : port,
  };
}

export function installNet(cfg: PodRuntimeConfig): void {
  const podIP = cfg.pod.ip;
  const rw = netRewriter(cfg);
  const normalizeArgs = (net as any)._normalizeArgs as (args: unknown[]) => any[];
  const normalizedSym = Object.getOwnPropertySymbols(normalizeArgs([]))[0];

  // --- connect ---------------------------------------------------------------------------------------------------
  const origConnect = net.Socket.prototype.connect;
  function patchHandle(sock: any, bound: boolean): void {
    const h = sock._handle;
    if (!h || h[PATCHED] || typeof h.connect !== 'function') return;
    h[PATCHED] = true;
    const c4 = h.connect;
    const c6 = h.connect6;
    const rewrite = (handle: any, req: any, addr: string, port: number, orig: (...a: any[]) => number) => {
      const dest = rw.dest(addr);
      if (!dest.startsWith('127.')) return orig.call(handle, req, addr, port);
      const p = rw.port(dest, port);
      if (!bound) {
        const err = handle.bind(podIP, 0);
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

  /** A user-supplied lookup may answer 127.0.0.1 and ::1 for localhost: keep one loopback answer, as the pod IP. */
  function wrapLookup(lookup: (...a: any[]) => void) {
    return function (this: unknown, host: string, opts: any, cb: (...a: any[]) => void) {
      return lookup.call(this, host, opts, (err: unknown, addr: any, family?: number) => {
        if (err || !Array.isArray(addr)) {
          if (!err && typeof addr === 'string' && LOCAL_LITERALS.has(addr)) return cb(null, podIP, 4);
          return cb(err, addr, family);
        }
        const mapped = addr.map((a: { address: string; family: number }) =>
          LOCAL_LITERALS.has(a.address) ? { address: podIP, family: 4 } : a,
        );
        const loop = mapped.find((a: { address: string }) => a.address.startsWith('127.'));
        cb(null, loop ? [loop] : mapped);
      });
    };
  }

  net.Socket.prototype.connect = function (this: any, ...args: unknown[]) {
    const normalized =
      Array.isArray(args[0]) && (args[0] as any)[normalizedSym] ? (args[0] as any[]) : normalizeArgs(args);
    const opts = normalized[0];
    if (opts && opts.path == null) {
      if (typeof opts.lookup === 'function' && !opts.lookup[PATCHED]) {
        const copy = { ...opts, lookup: wrapLookup(opts.lookup) };
        copy.lookup[PATCHED] = true;
        normalized[0] = copy;
      }
      const ret = origConnect.call(this, normalized as any);
      patchHandle(this, !!(opts.localAddress || opts.localPort));
      return ret;
    }
    return origConnect.call(this, normalized as any);
  } as typeof net.Socket.prototype.connect;

  // --- listen ----------------------------------------------------------------------------------------------------
  const origListen = net.Server.prototype.listen;
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
    opts.host = rw.listenHost(opts.host);
    delete opts.ipv6Only;
    if (typeof opts.host === 'string' && opts.host.startsWith('127.')) {
      opts.port = rw.port(opts.host, Number(opts.port ?? 0));
    }
    return cb ? origListen.call(this, opts, cb) : origListen.call(this, opts);
  } as typeof net.Server.prototype.listen;

  // --- UDP: bind only (sends to 127.0.0.1 are not rewritten; see README) ----------------------------------------
  const origBind = dgram.Socket.prototype.bind;
  dgram.Socket.prototype.bind = function (this: dgram.Socket, ...args: any[]) {
    if ((this as any).type !== 'udp4') return (origBind as any).apply(this, args);
    if (args[0] && typeof args[0] === 'object') {
      args[0] = { ...args[0], address: rw.listenHost(args[0].address) };
    } else if (typeof args[1] === 'string' || args[1] === undefined || typeof args[1] === 'function') {
      const cb = typeof args[1] === 'function' ? args[1] : args[2];
      const address = typeof args[1] === 'string' ? args[1] : undefined;
      args = [args[0] ?? 0, rw.listenHost(address), ...(cb ? [cb] : [])];
    }
    return (origBind as any).apply(this, args);
  } as typeof dgram.Socket.prototype.bind;
}
