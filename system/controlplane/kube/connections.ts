// Kept-alive connections for every @kubernetes/client-node request of a KubeConfig. client-node 2.0.1's
// applySecurityAuthentication (dist/config.js), which every generated API client, KubernetesObjectApi and Watch call
// before each request, builds a new undici Agent per request (its private createDispatcher; only the https.Agent of
// the WebSocket paths is cached), so every request opened a new TCP connection, did a full TLS handshake and parsed
// the CA into a new SecureContext: bench:apiserver measured a GET of one ConfigMap at ~2,200 µs against ~190 µs over
// a kept-alive raw HTTPS connection, and a profile of the GET loop had TLSSocket._start, getPeerCertificate and
// createSecureContext on top. client-go keeps one transport per TLS configuration and reuses its connections
// (k8s.io/client-go/transport/cache.go, tlsTransportCache); so does this module:
// - the credentials and the TLS material are still derived per request by the library's own public
//   applyToHTTPSOptions, so its authenticators (a token file read again, exec plugins, kube/token-file.ts) run on
//   every request as before, and a renewed CA or client certificate file is seen;
// - the dispatcher options come from the library's own public createDispatcherOptions, and the dispatcher built for
//   them is kept per cluster and user; when the options change (a rotated certificate), a new one is built and the
//   old one closed once its requests (a running watch included) have ended;
// - a SOCKS proxy keeps the library's per-request dispatcher (its connector is not exported).
// undici unrefs idle sockets, so a kept-alive connection never holds a process open; closeConnections() ends them.
import type https from 'node:https';
import { isDeepStrictEqual } from 'node:util';
import type { Cluster, DispatcherOptions, KubeConfig, RequestContext } from '@kubernetes/client-node';
import { Agent, type Dispatcher, ProxyAgent } from 'undici';

interface Pool {
  opts: DispatcherOptions;
  dispatcher: Dispatcher | undefined;
}

/** The pools of each KubeConfig reuseConnections was applied to, by cluster and user. */
const POOLS = new WeakMap<KubeConfig, Map<string, Pool>>();

/**
 * Makes every client-node request made with `kc` (API clients made before or after, Watch) reuse kept-alive
 * connections, as this file's header says. Idempotent; returns `kc`.
 */
export function reuseConnections(kc: KubeConfig): KubeConfig {
  if (POOLS.has(kc)) return kc;
  const pools = new Map<string, Pool>();
  POOLS.set(kc, pools);
  const perRequest = kc.applySecurityAuthentication.bind(kc);
  kc.applySecurityAuthentication = async (ctx: RequestContext) => {
    const cluster = kc.getCurrentCluster();
    if (cluster?.proxyUrl?.startsWith('socks')) return perRequest(ctx);
    const o: https.RequestOptions = {};
    await kc.applyToHTTPSOptions(o);
    // The order of the library's applySecurityAuthentication: basic auth, then the authenticators' headers.
    if (o.auth) ctx.setHeaderParam('Authorization', `Basic ${Buffer.from(o.auth).toString('base64')}`);
    for (const [k, v] of Object.entries(o.headers ?? {})) ctx.setHeaderParam(k, `${v}`);
    const dispatcher = pooled(kc, pools, cluster, o);
    if (dispatcher) ctx.setDispatcher(dispatcher);
  };
  return kc;
}

/** The dispatcher for these TLS options: the one built for the same options last time, else a new one. */
function pooled(
  kc: KubeConfig,
  pools: Map<string, Pool>,
  cluster: Cluster | null,
  o: https.RequestOptions,
): Dispatcher | undefined {
  const opts = kc.createDispatcherOptions(cluster, {
    ca: o.ca,
    cert: o.cert,
    key: o.key,
    pfx: o.pfx,
    passphrase: o.passphrase,
    ...(o.rejectUnauthorized !== undefined ? { rejectUnauthorized: o.rejectUnauthorized } : {}),
    ...(o.servername !== undefined ? { servername: o.servername } : {}),
  });
  const key = JSON.stringify([cluster?.name ?? '', cluster?.server ?? '', kc.getCurrentUser()?.name ?? '']);
  const hit = pools.get(key);
  if (hit && isDeepStrictEqual(hit.opts, opts)) return hit.dispatcher;
  hit?.dispatcher?.close().catch(() => {});
  let dispatcher: Dispatcher | undefined;
  if (opts.type === 'agent') dispatcher = new Agent({ connect: opts.connect });
  else if (opts.type === 'proxy') {
    dispatcher = new ProxyAgent({ uri: opts.uri, requestTls: opts.requestTls, connect: opts.connect });
  }
  pools.set(key, { opts, dispatcher });
  return dispatcher;
}

/** Closes the kept-alive connections of `kc` once the requests under way have ended; later requests open new ones. */
export async function closeConnections(kc: KubeConfig): Promise<void> {
  const pools = POOLS.get(kc);
  if (!pools) return;
  const all = [...pools.values()];
  pools.clear();
  await Promise.all(all.map((p) => p.dispatcher?.close().catch(() => {})));
}
