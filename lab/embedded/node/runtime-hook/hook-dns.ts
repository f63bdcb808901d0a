// Pod runtime hook, DNS part: cluster names resolve through the cluster DNS server with the pod's search path, for
// dns.lookup (what net, http, undici and grpc-js use), dns.promises and every dns.Resolver method. Names outside the
// cluster domain go to the original functions untouched. `localhost` is the pod loopback and the pod's own hostname its
// pod IP, as the kubelet's /etc/hosts has them (`127.0.0.1 localhost`, `<pod IP> <hostname>`).
import dns from 'node:dns';
import net from 'node:net';
import util from 'node:util';
import { type Candidate, isLocalhostName, searchCandidates } from './dns-names.ts';
import type { PodRuntimeConfig } from './runtime-config.ts';

type Cb = (err: NodeJS.ErrnoException | null, ...res: any[]) => void;

const RESOLVER_METHODS = [
  'resolve',
  'resolve4',
  'resolve6',
  'resolveAny',
  'resolveCaa',
  'resolveCname',
  'resolveMx',
  'resolveNaptr',
  'resolveNs',
  'resolvePtr',
  'resolveSoa',
  'resolveSrv',
  'resolveTlsa',
  'resolveTxt',
] as const;

/** Errors a missing name gives, so the next search candidate is tried. */
const NOT_FOUND = new Set(['ENOTFOUND', 'ENODATA', 'NXDOMAIN']);

function notFound(syscall: string, hostname: string, code = 'ENOTFOUND'): NodeJS.ErrnoException {
  const err: NodeJS.ErrnoException & { hostname?: string } = new Error(`${syscall} ${code} ${hostname}`);
  err.code = code;
  err.errno = code === 'ENOTFOUND' ? -3008 : undefined;
  err.syscall = syscall;
  err.hostname = hostname;
  return err;
}

type Method = (...a: any[]) => any;

/** The resolver functions as Node had them, captured before anything is patched. */
interface Originals {
  lookup: typeof dns.lookup;
  promisesLookup: typeof dns.promises.lookup;
  cbProto: Record<string, Method>;
  promProto: Record<string, Method>;
  cbModule: Record<string, Method>;
  promModule: Record<string, Method>;
}

type LookupAddress = { address: string; family: number };

/**
 * The pod's view of names: its own (localhost, its hostname) answered at once, cluster names asked to the cluster DNS
 * server along the search path, every other name to Node's original functions.
 */
class PodResolver {
  private readonly cfg: PodRuntimeConfig;
  private readonly orig: Originals;
  private readonly hostname: string;
  private readonly searchOpts: { search: string[]; ndots: number; clusterDomain: string };
  private clusterResolver?: dns.promises.Resolver;

  constructor(cfg: PodRuntimeConfig, orig: Originals) {
    this.cfg = cfg;
    this.orig = orig;
    this.hostname = cfg.hostname.toLowerCase();
    this.searchOpts = { search: cfg.dns.search, ndots: cfg.dns.ndots, clusterDomain: cfg.dns.clusterDomain };
  }

  /**
   * The resolver that asks the cluster DNS server, made on the first cluster lookup (a c-ares channel: ~5 ms of every
   * pod process's start, and many never look a name up). Short timeouts: it is on this machine, and a dead server
   * must not stall every external lookup for c-ares' default 5 s x 4 tries.
   */
  private get cluster(): dns.promises.Resolver {
    if (!this.clusterResolver) {
      this.clusterResolver = new dns.promises.Resolver({ timeout: 400, tries: 2 });
      this.clusterResolver.setServers([`${this.cfg.dns.server}:${this.cfg.dns.port}`]);
    }
    return this.clusterResolver;
  }

  /** The address of a name the pod answers itself (localhost, its hostname), or undefined. */
  ownAddress(name: string): string | undefined {
    return isLocalhostName(name)
      ? this.cfg.pod.loopback
      : name.toLowerCase() === this.hostname
        ? this.cfg.pod.ip
        : undefined;
  }

  clusterish(name: unknown): name is string {
    return (
      typeof name === 'string' &&
      name !== '' &&
      !net.isIP(name) &&
      searchCandidates(name, this.searchOpts).some((c) => c.cluster)
    );
  }

  private clusterCall(method: string, fqdn: string, extra: unknown[]): Promise<any> {
    return this.orig.promProto[method].call(this.cluster, fqdn, ...extra);
  }

  /** Tries the candidates in order; cluster ones on the cluster server, the others through `external`. */
  private async resolveCandidates<T>(
    candidates: Candidate[],
    viaCluster: (fqdn: string) => Promise<T>,
    external: (fqdn: string) => Promise<T>,
  ): Promise<T> {
    let lastErr: unknown;
    for (const c of candidates) {
      try {
        return await (c.cluster ? viaCluster(c.fqdn) : external(c.fqdn));
      } catch (err) {
        lastErr = err;
        const code = (err as NodeJS.ErrnoException).code ?? '';
        // A cluster server that does not answer (ECONNREFUSED, ETIMEOUT) must not hide external names either.
        if (!c.cluster && !NOT_FOUND.has(code)) throw err;
      }
    }
    throw lastErr;
  }

  /** dns.lookup semantics on top of the candidates; undefined when the name is not ours to answer. */
  ownLookup(name: string, family: number): Promise<LookupAddress[]> | undefined {
    const mine = this.ownAddress(name);
    if (mine) return Promise.resolve(family === 6 ? [] : [{ address: mine, family: 4 }]);
    if (!this.clusterish(name)) return undefined;
    const origPromisesLookup = this.orig.promisesLookup;
    return this.resolveCandidates<LookupAddress[]>(
      searchCandidates(name, this.searchOpts),
      async (fqdn) => {
        if (family === 6) throw notFound('getaddrinfo', fqdn); // cluster names have A records only
        const addrs: string[] = await this.clusterCall('resolve4', fqdn, []);
        return addrs.map((address) => ({ address, family: 4 }));
      },
      (fqdn) => (origPromisesLookup as any).call(dns.promises, fqdn, { all: true, family }) as Promise<LookupAddress[]>,
    ).catch((err) => {
      const code = (err as NodeJS.ErrnoException).code;
      throw NOT_FOUND.has(code ?? '') ? notFound('getaddrinfo', name) : err;
    });
  }

  /** A Resolver method (promise form) for `name`; `orig` answers names that are not the pod's or the cluster's. */
  resolve(method: string, self: unknown, orig: Method, name: string, extra: unknown[]): Promise<unknown> {
    const mine = typeof name === 'string' ? this.ownAddress(name) : undefined;
    if (mine) {
      const local = localAnswer(method, mine, extra);
      if (local) return Promise.resolve(local);
    }
    if (!this.clusterish(name)) return orig.call(self, name, ...extra);
    return this.resolveCandidates(
      searchCandidates(name, this.searchOpts),
      (fqdn) => this.clusterCall(method, fqdn, extra),
      (fqdn) => orig.call(self, fqdn, ...extra),
    );
  }
}

/** `resolve(name, rrtype?)` and `resolve4` of the pod's own names; undefined for other record types. */
function localAnswer(method: string, address: string, extra: unknown[]): unknown {
  const rrtype = method === 'resolve' ? String(extra[0] ?? 'A') : method === 'resolve4' ? 'A' : '';
  if (rrtype !== 'A') return undefined;
  const ttl = (extra.find((e) => typeof e === 'object' && e) as { ttl?: boolean } | undefined)?.ttl;
  return ttl ? [{ address, ttl: 0 }] : [address];
}

function parseLookupOptions(options: unknown): { family: number; all: boolean } {
  if (typeof options === 'number') return { family: options, all: false };
  const o = (options ?? {}) as { family?: number | string; all?: boolean };
  const family = o.family === 'IPv4' ? 4 : o.family === 'IPv6' ? 6 : Number(o.family ?? 0);
  return { family, all: !!o.all };
}

/** dns.lookup (callback, with its util.promisify.custom) and dns.promises.lookup. */
function patchLookup(r: PodResolver, orig: Originals): void {
  const promisesLookup = function lookup(name: string, options?: unknown): Promise<unknown> {
    const { family, all } = parseLookupOptions(options);
    const own = typeof name === 'string' ? r.ownLookup(name, family) : undefined;
    if (!own) return (orig.promisesLookup as any).call(dns.promises, name, options);
    return own.then((list) => {
      if (list.length === 0) throw notFound('getaddrinfo', name);
      return all ? list : list[0];
    });
  };
  const lookup = function lookup(this: unknown, name: string, options: unknown, callback?: Cb): unknown {
    const cb = (typeof options === 'function' ? options : callback) as Cb;
    const opts = typeof options === 'function' ? undefined : options;
    const { family, all } = parseLookupOptions(opts);
    const own = typeof name === 'string' ? r.ownLookup(name, family) : undefined;
    if (!own) return (orig.lookup as any).call(dns, name, options, callback);
    own.then(
      (list) => {
        if (list.length === 0) return cb(notFound('getaddrinfo', name));
        if (all) cb(null, list);
        else cb(null, list[0].address, list[0].family);
      },
      (err) => cb(err),
    );
    return {};
  };
  Object.defineProperty(lookup, util.promisify.custom, {
    value: (name: string, options?: unknown) => promisesLookup(name, options),
  });
  (dns as any).lookup = lookup;
  (dns.promises as any).lookup = promisesLookup;
}

/** Every Resolver method, on dns.Resolver, dns.promises.Resolver and the module functions of both. */
function patchResolvers(r: PodResolver, orig: Originals): void {
  const cbProto = dns.Resolver.prototype as any;
  const promProto = dns.promises.Resolver.prototype as any;
  for (const m of RESOLVER_METHODS) {
    if (typeof orig.promProto[m] === 'function') {
      promProto[m] = function (this: unknown, name: string, ...extra: unknown[]) {
        return r.resolve(m, this, orig.promProto[m], name, extra);
      };
    }
    if (typeof orig.promModule[m] === 'function') {
      (dns.promises as any)[m] = (name: string, ...extra: unknown[]) =>
        r.resolve(m, dns.promises, orig.promModule[m], name, extra);
    }
    const wrapCb = (fn: Method) =>
      function (this: unknown, name: string, ...rest: unknown[]) {
        const cb = rest[rest.length - 1];
        if (typeof cb !== 'function' || !(r.clusterish(name) || isLocalhostName(String(name)))) {
          return fn.call(this, name, ...rest);
        }
        const extra = rest.slice(0, -1);
        // The external candidate goes through the original callback API, promisified.
        const ext = (n: string, ...e: unknown[]) =>
          new Promise((resolve, reject) =>
            fn.call(this, n, ...e, (err: unknown, res: unknown) => (err ? reject(err) : resolve(res))),
          );
        r.resolve(m, this, ext, name, extra).then(
          (res: unknown) => (cb as Cb)(null, res),
          (err: NodeJS.ErrnoException) => (cb as Cb)(err),
        );
        return {};
      };
    if (typeof orig.cbProto[m] === 'function') cbProto[m] = wrapCb(orig.cbProto[m]);
    if (typeof orig.cbModule[m] === 'function') (dns as any)[m] = wrapCb(orig.cbModule[m]);
  }
}

export function installDns(cfg: PodRuntimeConfig): void {
  // Originals, captured before anything is patched.
  const orig: Originals = {
    lookup: dns.lookup,
    promisesLookup: dns.promises.lookup,
    cbProto: {},
    promProto: {},
    cbModule: {},
    promModule: {},
  };
  const cbProto = dns.Resolver.prototype as any;
  const promProto = dns.promises.Resolver.prototype as any;
  for (const m of RESOLVER_METHODS) {
    orig.cbProto[m] = cbProto[m];
    orig.promProto[m] = promProto[m];
    orig.cbModule[m] = (dns as any)[m];
    orig.promModule[m] = (dns.promises as any)[m];
  }
  const r = new PodResolver(cfg, orig);
  patchLookup(r, orig);
  patchResolvers(r, orig);
}
