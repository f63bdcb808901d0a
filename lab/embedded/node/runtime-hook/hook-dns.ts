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

export function installDns(cfg: PodRuntimeConfig): void {
  const hostname = cfg.hostname.toLowerCase();
  /** The address of a name the pod answers itself (localhost, its hostname), or undefined. */
  const ownAddress = (name: string): string | undefined =>
    isLocalhostName(name) ? cfg.pod.loopback : name.toLowerCase() === hostname ? cfg.pod.ip : undefined;
  const searchOpts = { search: cfg.dns.search, ndots: cfg.dns.ndots, clusterDomain: cfg.dns.clusterDomain };

  // Originals, captured before anything is patched.
  const origLookup = dns.lookup;
  const origPromisesLookup = dns.promises.lookup;
  const origCbProto: Record<string, (...a: any[]) => any> = {};
  const origPromProto: Record<string, (...a: any[]) => any> = {};
  const origCbModule: Record<string, (...a: any[]) => any> = {};
  const origPromModule: Record<string, (...a: any[]) => any> = {};
  const cbProto = dns.Resolver.prototype as any;
  const promProto = dns.promises.Resolver.prototype as any;
  for (const m of RESOLVER_METHODS) {
    origCbProto[m] = cbProto[m];
    origPromProto[m] = promProto[m];
    origCbModule[m] = (dns as any)[m];
    origPromModule[m] = (dns.promises as any)[m];
  }

  // The resolver that asks the cluster DNS server. Short timeouts: it is on this machine, and a dead server must not
  // stall every external lookup for c-ares' default 5 s x 4 tries.
  const cluster = new dns.promises.Resolver({ timeout: 400, tries: 2 });
  cluster.setServers([`${cfg.dns.server}:${cfg.dns.port}`]);
  const clusterCall = (method: string, fqdn: string, extra: unknown[]): Promise<any> =>
    origPromProto[method].call(cluster, fqdn, ...extra);

  /** Tries the candidates in order; cluster ones on the cluster server, the others through `external`. */
  async function resolveCandidates<T>(
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

  function clusterish(name: unknown): name is string {
    return (
      typeof name === 'string' &&
      name !== '' &&
      !net.isIP(name) &&
      searchCandidates(name, searchOpts).some((c) => c.cluster)
    );
  }

  type LookupAddress = { address: string; family: number };
  /** dns.lookup semantics on top of the candidates; undefined when the name is not ours to answer. */
  function ownLookup(name: string, family: number): Promise<LookupAddress[]> | undefined {
    const mine = ownAddress(name);
    if (mine) return Promise.resolve(family === 6 ? [] : [{ address: mine, family: 4 }]);
    if (!clusterish(name)) return undefined;
    return resolveCandidates<LookupAddress[]>(
      searchCandidates(name, searchOpts),
      async (fqdn) => {
        if (family === 6) throw notFound('getaddrinfo', fqdn); // cluster names have A records only
        const addrs: string[] = await clusterCall('resolve4', fqdn, []);
        return addrs.map((address) => ({ address, family: 4 }));
      },
      (fqdn) => (origPromisesLookup as any).call(dns.promises, fqdn, { all: true, family }) as Promise<LookupAddress[]>,
    ).catch((err) => {
      const code = (err as NodeJS.ErrnoException).code;
      throw NOT_FOUND.has(code ?? '') ? notFound('getaddrinfo', name) : err;
    });
  }

  function parseLookupOptions(options: unknown): { family: number; all: boolean } {
    if (typeof options === 'number') return { family: options, all: false };
    const o = (options ?? {}) as { family?: number | string; all?: boolean };
    const family = o.family === 'IPv4' ? 4 : o.family === 'IPv6' ? 6 : Number(o.family ?? 0);
    return { family, all: !!o.all };
  }

  const lookup = function lookup(this: unknown, name: string, options: unknown, callback?: Cb): unknown {
    const cb = (typeof options === 'function' ? options : callback) as Cb;
    const opts = typeof options === 'function' ? undefined : options;
    const { family, all } = parseLookupOptions(opts);
    const own = typeof name === 'string' ? ownLookup(name, family) : undefined;
    if (!own) return (origLookup as any).call(dns, name, options, callback);
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

  const promisesLookup = function lookup(name: string, options?: unknown): Promise<unknown> {
    const { family, all } = parseLookupOptions(options);
    const own = typeof name === 'string' ? ownLookup(name, family) : undefined;
    if (!own) return (origPromisesLookup as any).call(dns.promises, name, options);
    return own.then((list) => {
      if (list.length === 0) throw notFound('getaddrinfo', name);
      return all ? list : list[0];
    });
  };

  (dns as any).lookup = lookup;
  (dns.promises as any).lookup = promisesLookup;

  // Resolver methods. `resolve(name, rrtype?)` dispatches internally, so it is wrapped on its own.
  const localAnswer = (method: string, address: string, extra: unknown[]): unknown => {
    const rrtype = method === 'resolve' ? String(extra[0] ?? 'A') : method === 'resolve4' ? 'A' : '';
    if (rrtype !== 'A') return undefined;
    const ttl = (extra.find((e) => typeof e === 'object' && e) as { ttl?: boolean } | undefined)?.ttl;
    return ttl ? [{ address, ttl: 0 }] : [address];
  };

  function promiseResolve(method: string, self: unknown, orig: (...a: any[]) => any, name: string, extra: unknown[]) {
    const mine = typeof name === 'string' ? ownAddress(name) : undefined;
    if (mine) {
      const local = localAnswer(method, mine, extra);
      if (local) return Promise.resolve(local);
    }
    if (!clusterish(name)) return orig.call(self, name, ...extra);
    return resolveCandidates(
      searchCandidates(name, searchOpts),
      (fqdn) => clusterCall(method, fqdn, extra),
      (fqdn) => orig.call(self, fqdn, ...extra),
    );
  }

  for (const m of RESOLVER_METHODS) {
    if (typeof origPromProto[m] === 'function') {
      promProto[m] = function (this: unknown, name: string, ...extra: unknown[]) {
        return promiseResolve(m, this, origPromProto[m], name, extra);
      };
    }
    if (typeof origPromModule[m] === 'function') {
      (dns.promises as any)[m] = (name: string, ...extra: unknown[]) =>
        promiseResolve(m, dns.promises, origPromModule[m], name, extra);
    }
    const wrapCb = (orig: (...a: any[]) => any) =>
      function (this: unknown, name: string, ...rest: unknown[]) {
        const cb = rest[rest.length - 1];
        if (typeof cb !== 'function' || !(clusterish(name) || isLocalhostName(String(name)))) {
          return orig.call(this, name, ...rest);
        }
        const extra = rest.slice(0, -1);
        // The external candidate goes through the original callback API, promisified.
        const ext = (n: string, ...e: unknown[]) =>
          new Promise((resolve, reject) =>
            orig.call(this, n, ...e, (err: unknown, res: unknown) => (err ? reject(err) : resolve(res))),
          );
        promiseResolve(m, this, ext, name, extra).then(
          (res: unknown) => (cb as Cb)(null, res),
          (err: NodeJS.ErrnoException) => (cb as Cb)(err),
        );
        return {};
      };
    if (typeof origCbProto[m] === 'function') cbProto[m] = wrapCb(origCbProto[m]);
    if (typeof origCbModule[m] === 'function') (dns as any)[m] = wrapCb(origCbModule[m]);
  }
}
