// How @kubernetes/client-node's requests travel, for the control plane and the lab's tools alike (withTransport(kc)).
// Measured by bench:apiserver (a GET of one ConfigMap): ~2,200 µs through client-node 2.0.1 as it comes against
// ~190 µs over raw HTTPS on a kept-alive connection. Two causes, each fixed through the library's public surface:
// 1. Connections. Its applySecurityAuthentication (dist/config.js), which every generated API client,
//    KubernetesObjectApi and Watch call before each request, builds a new undici Agent per request (its private
//    createDispatcher; only the https.Agent of the WebSocket paths is cached), so every request opened a new TCP
//    connection, did a full TLS handshake and parsed the CA into a new SecureContext (a CPU profile of the GET loop
//    had TLSSocket._start, getPeerCertificate and createSecureContext on top). client-go keeps one transport per TLS
//    configuration and reuses its connections (k8s.io/client-go/transport/cache.go, tlsTransportCache); so does this:
//    the credentials and TLS material are still derived per request by the library's public applyToHTTPSOptions (its
//    authenticators — a token file read again, exec plugins, kube/token-file.ts — run on every request as before, and
//    a renewed CA or client certificate file is seen), the dispatcher options come from its public
//    createDispatcherOptions, and the dispatcher built for them is kept per cluster and user; when they change, a new
//    one is built and the old one closed once its requests (a running watch) have ended. A SOCKS proxy keeps the
//    library's per-request dispatcher (its connector is not exported).
// 2. The HTTP layer. Its default HttpLibrary calls undici's fetch(), whose WHATWG objects (Request, Headers, Response,
//    body streams, resource timing) cost more CPU per request than the server's own work; API clients made from kc
//    get an HttpLibrary on undici's request() instead (Configuration.httpApi, the generated client's own option),
//    behaving as the fetch one for the Kubernetes API: the same headers (with fetch's `accept-encoding: gzip,
//    deflate`, and gzip/deflate/br bodies decoded), a transport failure thrown as fetch's TypeError('fetch failed',
//    {cause}), the request's AbortSignal. Not kept: fetch follows redirects, which the API server does not send.
//    Watch, logs and port-forward keep the library's own paths (their connections pooled by 1).
// undici unrefs idle sockets, so a kept-alive connection never holds a process open; closeTransport() ends them.
import type https from 'node:https';
import { isDeepStrictEqual, promisify } from 'node:util';
import zlib from 'node:zlib';
import {
  type ApiConstructor,
  type ApiType,
  type Cluster,
  type Configuration,
  type DispatcherOptions,
  type KubeConfig,
  type RequestContext,
  ResponseContext,
  SelfDecodingBody,
  wrapHttpLibrary,
} from '@kubernetes/client-node';
import { Agent, type Dispatcher, ProxyAgent, request } from 'undici';

interface Pool {
  opts: DispatcherOptions;
  dispatcher: Dispatcher | undefined;
}

/** The pools of each KubeConfig withTransport was applied to, by cluster and user. */
const POOLS = new WeakMap<KubeConfig, Map<string, Pool>>();

/**
 * Makes every client-node request made with `kc` reuse kept-alive connections (API clients made before or after,
 * Watch), and API clients made from it afterwards use request() instead of fetch(), as this file's header says.
 * Idempotent; returns `kc`.
 */
export function withTransport(kc: KubeConfig): KubeConfig {
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
  // The library's own makeApiClient builds the configuration (server, this auth, its User-Agent middleware); the
  // client class it is given swaps in the HttpLibrary.
  const make = kc.makeApiClient.bind(kc);
  kc.makeApiClient = <T extends ApiType>(type: ApiConstructor<T>): T => {
    const Base = type as unknown as new (...args: any[]) => object;
    const OverRequest = class extends Base {
      constructor(...args: any[]) {
        super({ ...(args[0] as Configuration), httpApi: HTTP_API });
      }
    };
    return make(OverRequest as unknown as ApiConstructor<T>);
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
export async function closeTransport(kc: KubeConfig): Promise<void> {
  const pools = POOLS.get(kc);
  if (!pools) return;
  const all = [...pools.values()];
  pools.clear();
  await Promise.all(all.map((p) => p.dispatcher?.close().catch(() => {})));
}

const DECODE: Record<string, (b: Buffer) => Promise<Buffer>> = {
  gzip: promisify(zlib.gunzip),
  'x-gzip': promisify(zlib.gunzip),
  deflate: promisify(zlib.inflate),
  br: promisify(zlib.brotliDecompress),
};

/** The body, decoded from its content-encodings (applied in the order listed, so undone from the last). */
async function decoded(body: Buffer, encoding: string | undefined): Promise<Buffer> {
  const codings = (encoding ?? '').split(',').map((c) => c.trim().toLowerCase());
  for (const c of codings.reverse()) if (DECODE[c]) body = await DECODE[c](body);
  return body;
}

/** client-node's HttpLibrary over undici's request(), as this file's header says. */
const HTTP_API = wrapHttpLibrary({
  async send(ctx: RequestContext): Promise<ResponseContext> {
    const headers = ctx.getHeaders();
    const signal = ctx.getSignal();
    const hasEncoding = Object.keys(headers).some((h) => h.toLowerCase() === 'accept-encoding');
    try {
      const res = await request(ctx.getUrl(), {
        method: ctx.getHttpMethod() as Dispatcher.HttpMethod,
        headers: hasEncoding ? headers : { ...headers, 'accept-encoding': 'gzip, deflate' },
        body: ctx.getBody() as string | undefined,
        signal,
        dispatcher: ctx.getDispatcher(),
      });
      const flat: Record<string, string> = {};
      for (const [k, v] of Object.entries(res.headers))
        if (v !== undefined) flat[k] = Array.isArray(v) ? v.join(', ') : v;
      const body = await decoded(Buffer.from(await res.body.arrayBuffer()), flat['content-encoding']);
      return new ResponseContext(res.statusCode, flat, new SelfDecodingBody(Promise.resolve(body)));
    } catch (err) {
      if (signal?.aborted) throw signal.reason ?? err;
      throw new TypeError('fetch failed', { cause: err });
    }
  },
});
