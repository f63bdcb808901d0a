// The embedded cluster's own Kubernetes client, for its controllers and its node agent: HTTP to the API server (its
// loopback socket in the lab process, unixSocketConnector; HTTPS otherwise) with a bearer token (the same handler,
// authentication, admission and watch semantics as every other client; apiserver/README.md "How controllers talk to
// the server"), undici with keep-alive. It is the ListWatchSource of the
// project's list-watch loop and informer (system/shared/kube/list-watch.ts); events.ts builds the event recorder on it.
// It takes plain credentials (ApiServerHandle.credentials) or a client-node KubeConfig, and never loads client-node
// itself: the lab process does without its ~870 modules (issue 14: ~0.4 s of CPU at every lab start, ~60 MB resident).
import net, { isIP } from 'node:net';
import tls from 'node:tls';
import type { KubeConfig } from '@kubernetes/client-node';
import { Agent, type buildConnector, type Dispatcher, request } from 'undici';
import type { ListWatchSource, ObjectList, WatchEventLine } from '../../../system/shared/kube/list-watch.ts';
import { LineSplitter } from './lines.ts';

export type { WatchEventLine };

export class KubeError extends Error {
  readonly code: number;
  readonly status: any;
  constructor(code: number, status: any) {
    super(status?.message ?? `HTTP ${code}`);
    this.code = code;
    this.status = status;
  }
}

export interface ApiResource {
  group: string;
  version: string;
  plural: string;
  kind: string;
  namespaced: boolean;
  verbs: string[];
}

/** Where a KubeClient connects and who it is: the API server's URL, the CA that signed its certificate, a bearer token. */
export interface ClientCredentials {
  server: string;
  caPem?: string;
  token: string;
  /**
   * The TLS connector of the server's clients (undici's buildConnector, with the CA): one TLS session cache for all of
   * them, so that their connections resume a session rather than each making a full handshake. The lab process is
   * client and server of ~35 connections at start; full handshakes cost ~3x the CPU of resumed ones.
   */
  connector?: buildConnector.connector;
}

/**
 * A connector to the API server's loopback socket (a Unix socket, plain HTTP/1.1): the lab process's own clients reach
 * their server in the same process without encrypting and decrypting every byte twice (apiserver/index.ts).
 */
export function unixSocketConnector(path: string): buildConnector.connector {
  return (_opts, callback) => {
    const socket = net.connect(path);
    let answered = false;
    socket.once('connect', () => {
      answered = true;
      callback(null, socket);
    });
    socket.once('error', (err) => {
      if (!answered) callback(err, null);
    });
  };
}

/**
 * A TLS connector for the clients of one server (ClientCredentials.connector, undici's `connect` option): HTTP/1.1
 * over TLS with the server's CA, every connection resuming the latest TLS session (undici's own cache holds sessions
 * weakly, and a garbage collection between two connections loses the one to resume).
 */
export function sharedTlsConnector(caPem: string): buildConnector.connector {
  let session: Buffer | undefined;
  // One SecureContext for every connection: `ca` given to each tls.connect parsed the CA into a new one each time
  // (~1 % of the lab processes' CPU over a test run, the controllers' and kubelet's connections coming and going).
  const secureContext = tls.createSecureContext({ ca: caPem });
  return ({ hostname, port }, callback) => {
    const socket = tls.connect({
      host: hostname,
      port: Number(port) || 443,
      secureContext,
      session,
      ALPNProtocols: ['http/1.1'],
      ...(isIP(hostname) ? {} : { servername: hostname }),
    });
    socket.setNoDelay(true);
    socket.on('session', (s: Buffer) => {
      session = s;
    });
    let answered = false;
    // undici's own connector gives up after 10 s as well.
    const timer = setTimeout(() => socket.destroy(new Error(`connect timeout (${hostname}:${port})`)), 10_000);
    timer.unref();
    socket.once('secureConnect', () => {
      answered = true;
      clearTimeout(timer);
      callback(null, socket);
    });
    socket.once('error', (err) => {
      clearTimeout(timer);
      if (!answered) callback(err, null);
    });
  };
}

/** The current context's server, CA and token of a client-node KubeConfig. */
export function credentialsOf(kc: KubeConfig): ClientCredentials {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error('kubeconfig has no current cluster');
  const caPem = cluster.caData ? Buffer.from(cluster.caData, 'base64').toString() : undefined;
  return { server: cluster.server, caPem, token: kc.getCurrentUser()?.token ?? '' };
}

/** A watch that sent nothing (not even a bookmark) for this long is dropped and re-established (client-node's Watch). */
const WATCH_IDLE_MS = 30_000;

export class KubeClient implements ListWatchSource {
  readonly credentials: ClientCredentials;
  private readonly server: string;
  private readonly dispatcher: Agent;
  /** Watches hold their connection for as long as they run: a pool of their own, not bounded as requests are. */
  private readonly watchDispatcher: Agent;
  private readonly token: string;

  constructor(from: ClientCredentials | KubeConfig) {
    const c = 'server' in from ? from : credentialsOf(from);
    this.credentials = c;
    this.server = c.server;
    const connect = c.connector ?? { ca: c.caPem };
    this.dispatcher = new Agent({ connect, connections: 8 });
    this.watchDispatcher = new Agent({ connect });
    this.token = c.token;
  }

  private headers(): Record<string, string> {
    return {
      Authorization: `Bearer ${this.token}`,
      Accept: 'application/json',
      'User-Agent': 'gwlab-controller-manager',
    };
  }

  async request<T = any>(method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<T> {
    // undici's request(), not fetch(): fetch's WHATWG Request/Response/stream layers made undici ~7 % of the lab
    // process's CPU during lab:up (its controllers and node agent make every request through here).
    const res = await request(this.server + path, {
      method: method as Dispatcher.HttpMethod,
      dispatcher: this.dispatcher,
      headers: { ...this.headers(), ...(body !== undefined ? { 'Content-Type': contentType } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.body.text();
    let parsed: any;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = { message: text };
    }
    if (res.statusCode >= 400) throw new KubeError(res.statusCode, parsed);
    return parsed as T;
  }

  /** GET of a collection, `params` as its query (ListWatchSource.list). */
  list(path: string, params: Record<string, string> = {}): Promise<ObjectList> {
    const query = new URLSearchParams(params).toString();
    return this.request('GET', query ? `${path}?${query}` : path);
  }

  /** GET of one object: undefined when it does not exist (404); other errors throw. */
  async getIfExists<T = any>(path: string): Promise<T | undefined> {
    try {
      return await this.request<T>('GET', path);
    } catch (err) {
      if (err instanceof KubeError && err.code === 404) return undefined;
      throw err;
    }
  }

  /** Every resource the server serves (from the legacy per-group-version discovery lists). */
  async resources(): Promise<ApiResource[]> {
    const out: ApiResource[] = [];
    const add = (group: string, version: string, list: any) => {
      for (const r of list.resources ?? []) {
        if (String(r.name).includes('/')) continue;
        out.push({ group, version, plural: r.name, kind: r.kind, namespaced: r.namespaced, verbs: r.verbs ?? [] });
      }
    };
    const [core, groups] = await Promise.all([this.request('GET', '/api/v1'), this.request('GET', '/apis')]);
    add('', 'v1', core);
    // The groups' lists side by side, added in the server's order.
    const lists = await Promise.all(
      (groups.groups ?? []).map(async (g: any) => {
        const v = g.preferredVersion?.version ?? g.versions?.[0]?.version;
        try {
          return { g, v, list: await this.request('GET', `/apis/${g.name}/${v}`) };
        } catch (e) {
          if (!(e instanceof KubeError && e.code === 404)) throw e;
          return undefined;
        }
      }),
    );
    for (const l of lists) if (l) add(l.g.name, l.v, l.list);
    return out;
  }

  /**
   * Watches `path` (`?watch=true` and `params` added), calling `onEvent` for each event line, until the server ends the
   * stream (resolves) or it fails (rejects; a refused watch with a KubeError of its status). `signal` aborts it.
   */
  async watch(
    path: string,
    params: Record<string, string | boolean | undefined>,
    onEvent: (e: WatchEventLine) => void,
    signal: AbortSignal,
  ): Promise<void> {
    const url = new URL(this.server + path);
    url.searchParams.set('watch', 'true');
    for (const [k, v] of Object.entries(params)) if (v !== undefined) url.searchParams.set(k, String(v));
    const idle = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const touch = () => {
      clearTimeout(timer);
      timer = setTimeout(
        () => idle.abort(new Error(`watch ${path}: nothing received in ${WATCH_IDLE_MS} ms`)),
        WATCH_IDLE_MS,
      );
      timer.unref();
    };
    touch();
    try {
      const res = await request(url, {
        dispatcher: this.watchDispatcher,
        headers: this.headers(),
        signal: AbortSignal.any([signal, idle.signal]),
      });
      if (res.statusCode !== 200) {
        const text = await res.body.text();
        let status: any;
        try {
          status = JSON.parse(text);
        } catch {
          status = { message: text };
        }
        throw new KubeError(res.statusCode, status);
      }
      const lines = new LineSplitter();
      for await (const chunk of res.body) {
        touch();
        for (const line of lines.push(chunk)) {
          let e: WatchEventLine;
          try {
            e = JSON.parse(line);
          } catch {
            continue; // as client-node's Watch: a line that is not JSON is skipped
          }
          onEvent(e);
        }
      }
    } finally {
      clearTimeout(timer);
    }
  }

  /** Closes the connections: requests in flight finish, watches still open are ended (they would never finish). */
  async close(): Promise<void> {
    await Promise.all([this.dispatcher.close(), this.watchDispatcher.destroy()]);
  }
}

export function basePath(r: { group: string; version: string }): string {
  return r.group ? `/apis/${r.group}/${r.version}` : `/api/${r.version}`;
}

export function collectionPath(r: ApiResource, namespace?: string): string {
  return r.namespaced && namespace
    ? `${basePath(r)}/namespaces/${namespace}/${r.plural}`
    : `${basePath(r)}/${r.plural}`;
}

export function objectPath(r: ApiResource, namespace: string | undefined, name: string): string {
  return `${collectionPath(r, namespace)}/${encodeURIComponent(name)}`;
}
