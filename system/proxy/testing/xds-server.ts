// A small ADS server (state of the world and delta) for the proxy's tests, on the same shared service definition the control plane uses.
// Per stream and type it tracks the last nonce sent and the names asked for; it answers a request when the
// snapshot has a version the stream has not been sent (or the names changed), ignores stale nonces, and records
// every request so tests can assert ACKs, NACKs and their error_detail.
import { createHash } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { fromGrpcObject, packAny } from '../../shared/envoy/protojson.ts';
import { adsService, TYPE_URL, typeNameOf } from '../../shared/envoy/protos.ts';

type J = Record<string, any>;

export interface RecordedRequest {
  stream: number;
  type_url: string;
  version_info: string;
  response_nonce: string;
  resource_names: string[];
  error_detail?: { code: number; message: string };
  /** The node as canonical JSON (metadata as plain JSON), when the request carried one. */
  node?: J;
  /** 'initial' (no nonce), 'ack', 'nack' or 'stale' (nonce not the last one sent). */
  kind: 'initial' | 'ack' | 'nack' | 'stale';
  /** Delta streams: the request's subscription changes and the versions the client said it has. */
  delta?: { subscribe: string[]; unsubscribe: string[]; initial: Record<string, string> };
}

interface Snapshot {
  version: string;
  /** Resources by name, each encoded once (an Any) when the snapshot is set. */
  resources: Map<string, { json: J; any: { type_url: string; value: Uint8Array } }>;
}

interface StreamState {
  id: number;
  delta: boolean;
  /** Delta: per type, the version (digest) of each resource the client has. */
  has: Map<string, Map<string, string>>;
  /** Delta: per type, wildcard subscription. */
  wildcard: Map<string, boolean>;
  call: grpc.ServerDuplexStream<J, J>;
  lastNonce: Map<string, string>;
  sentVersion: Map<string, string>;
  names: Map<string, Set<string>>;
  subscribed: Set<string>;
}

const WILDCARD = new Set<string>([TYPE_URL.listener, TYPE_URL.cluster]);

export interface XdsSnapshot {
  clusters?: J[];
  endpoints?: J[];
  listeners?: J[];
  routes?: J[];
}

export class TestXdsServer {
  readonly requests: RecordedRequest[] = [];
  private readonly server = new grpc.Server();
  private readonly streams = new Set<StreamState>();
  private readonly snapshots = new Map<string, Snapshot>();
  private nonce = 0;
  private streamIds = 0;
  private waiters: Array<{ pred: (r: RecordedRequest) => boolean; resolve: (r: RecordedRequest) => void }> = [];
  port = 0;

  async start(port = 0): Promise<this> {
    this.server.addService(adsService(), {
      StreamAggregatedResources: (call: grpc.ServerDuplexStream<J, J>) => this.onStream(call),
      DeltaAggregatedResources: (call: grpc.ServerDuplexStream<J, J>) => this.onStream(call, true),
    });
    this.port = await new Promise<number>((resolve, reject) => {
      this.server.bindAsync(`127.0.0.1:${port}`, grpc.ServerCredentials.createInsecure(), (err, p) =>
        err ? reject(err) : resolve(p),
      );
    });
    return this;
  }

  get target(): string {
    return `127.0.0.1:${this.port}`;
  }

  get openStreams(): number {
    return this.streams.size;
  }

  /** Replaces the resources of a type (resources keyed by name / cluster_name) and pushes to subscribed streams. */
  set(typeUrl: string, version: string, resources: J[]): void {
    this.stage(typeUrl, version, resources);
    this.publish(typeUrl);
  }

  /** Encodes and stores a new version without sending it (benchmarks time publish() alone). */
  stage(typeUrl: string, version: string, resources: J[]): void {
    const map: Snapshot['resources'] = new Map();
    const url = `type.googleapis.com/${typeNameOf(typeUrl)}`;
    for (const r of resources)
      map.set(String(r.name ?? r.cluster_name), { json: r, any: packAny({ '@type': url, ...r }) });
    this.snapshots.set(typeUrl, { version, resources: map });
  }

  /** Sends the stored version of a type to every stream subscribed to it. */
  publish(typeUrl: string): void {
    for (const s of this.streams) if (s.subscribed.has(typeUrl)) this.respond(s, typeUrl, false);
  }

  /** Sets several types at once, in Envoy's push order: CDS, EDS, LDS, RDS. */
  setSnapshot(version: string, snap: XdsSnapshot): void {
    if (snap.clusters) this.set(TYPE_URL.cluster, version, snap.clusters);
    if (snap.endpoints) this.set(TYPE_URL.clusterLoadAssignment, version, snap.endpoints);
    if (snap.listeners) this.set(TYPE_URL.listener, version, snap.listeners);
    if (snap.routes) this.set(TYPE_URL.routeConfiguration, version, snap.routes);
  }

  /** Resolves with the first recorded request (past or future) that matches. */
  waitFor(pred: (r: RecordedRequest) => boolean, timeoutMs = 10_000, from = 0): Promise<RecordedRequest> {
    const seen = this.requests.slice(from).find(pred);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const w = {
        pred,
        resolve: (r: RecordedRequest) => {
          clearTimeout(t);
          resolve(r);
        },
      };
      const t = setTimeout(() => {
        this.waiters = this.waiters.filter((x) => x !== w);
        reject(
          new Error(
            `no matching xDS request within ${timeoutMs}ms; last: ${JSON.stringify(this.requests.slice(-4).map((r) => ({ ...r, node: undefined })))}`,
          ),
        );
      }, timeoutMs);
      this.waiters.push(w);
    });
  }

  /** Ends every open stream with UNAVAILABLE (the proxy then reconnects). */
  disconnectAll(): void {
    for (const s of this.streams) {
      s.call.emit('error', { code: grpc.status.UNAVAILABLE, details: 'test server dropped the stream' });
    }
    this.streams.clear();
  }

  async close(): Promise<void> {
    for (const s of this.streams) s.call.end();
    this.streams.clear();
    await new Promise<void>((resolve) => this.server.tryShutdown(() => resolve()));
    this.server.forceShutdown();
  }

  private onStream(call: grpc.ServerDuplexStream<J, J>, delta = false): void {
    const s: StreamState = {
      id: ++this.streamIds,
      delta,
      has: new Map(),
      wildcard: new Map(),
      call,
      lastNonce: new Map(),
      sentVersion: new Map(),
      names: new Map(),
      subscribed: new Set(),
    };
    this.streams.add(s);
    call.sendMetadata(new grpc.Metadata());
    call.on('data', (req: J) => (delta ? this.onDeltaRequest(s, req) : this.onRequest(s, req)));
    const gone = () => this.streams.delete(s);
    call.on('end', () => {
      gone();
      call.end();
    });
    call.on('error', gone);
    call.on('cancelled', gone);
  }

  private onRequest(s: StreamState, req: J): void {
    const typeUrl = String(req.type_url);
    const nonce = String(req.response_nonce ?? '');
    const last = s.lastNonce.get(typeUrl);
    const hasError = req.error_detail && (req.error_detail.code || req.error_detail.message);
    const kind: RecordedRequest['kind'] =
      nonce === '' ? 'initial' : nonce !== last ? 'stale' : hasError ? 'nack' : 'ack';
    const rec: RecordedRequest = {
      stream: s.id,
      type_url: typeUrl,
      version_info: String(req.version_info ?? ''),
      response_nonce: nonce,
      resource_names: [...(req.resource_names ?? [])],
      ...(hasError ? { error_detail: { code: req.error_detail.code, message: req.error_detail.message } } : {}),
      ...(req.node?.id ? { node: fromGrpcObject('envoy.config.core.v3.Node', req.node) } : {}),
      kind,
    };
    this.record(rec);
    if (kind === 'stale') return;
    s.subscribed.add(typeUrl);
    const before = s.names.get(typeUrl);
    const names = new Set<string>(rec.resource_names);
    s.names.set(typeUrl, names);
    const namesChanged = !before || before.size !== names.size || [...names].some((n) => !before.has(n));
    if (kind === 'initial' && rec.version_info === '') s.sentVersion.delete(typeUrl);
    if (kind === 'initial' && rec.version_info !== '') s.sentVersion.set(typeUrl, rec.version_info);
    this.respond(s, typeUrl, namesChanged && !WILDCARD.has(typeUrl));
  }

  private onDeltaRequest(s: StreamState, req: J): void {
    const typeUrl = String(req.type_url);
    const nonce = String(req.response_nonce ?? '');
    const last = s.lastNonce.get(typeUrl);
    const hasError = req.error_detail && (req.error_detail.code || req.error_detail.message);
    const subscribe = [...(req.resource_names_subscribe ?? [])] as string[];
    const unsubscribe = [...(req.resource_names_unsubscribe ?? [])] as string[];
    const initial = { ...(req.initial_resource_versions ?? {}) } as Record<string, string>;
    const kind: RecordedRequest['kind'] =
      nonce === '' ? 'initial' : nonce !== last ? 'stale' : hasError ? 'nack' : 'ack';
    const rec: RecordedRequest = {
      stream: s.id,
      type_url: typeUrl,
      version_info: '',
      response_nonce: nonce,
      resource_names: subscribe,
      ...(hasError ? { error_detail: { code: req.error_detail.code, message: req.error_detail.message } } : {}),
      ...(req.node?.id ? { node: fromGrpcObject('envoy.config.core.v3.Node', req.node) } : {}),
      kind,
      delta: { subscribe, unsubscribe, initial },
    };
    this.record(rec);
    if (kind === 'stale' || kind === 'ack' || kind === 'nack') return;
    // A subscription request (the first one of a type, or changed names).
    const first = !s.subscribed.has(typeUrl);
    s.subscribed.add(typeUrl);
    if (first) s.wildcard.set(typeUrl, WILDCARD.has(typeUrl) && (subscribe.length === 0 || subscribe.includes('*')));
    const names = s.names.get(typeUrl) ?? new Set<string>();
    for (const n of subscribe) if (n !== '*') names.add(n);
    for (const n of unsubscribe) names.delete(n);
    s.names.set(typeUrl, names);
    const has = s.has.get(typeUrl) ?? new Map<string, string>();
    for (const [n, v] of Object.entries(initial)) has.set(n, v);
    for (const n of unsubscribe) has.delete(n);
    s.has.set(typeUrl, has);
    this.respondDelta(s, typeUrl);
  }

  /** Sends what the client lacks: changed or new resources, and removals of ones it has that are gone. */
  private respondDelta(s: StreamState, typeUrl: string): void {
    const snap = this.snapshots.get(typeUrl);
    if (!snap) return;
    const has = s.has.get(typeUrl) ?? new Map<string, string>();
    const wildcard = s.wildcard.get(typeUrl) === true;
    const names = s.names.get(typeUrl) ?? new Set<string>();
    const wanted = (name: string) => wildcard || names.has(name);
    const resources: J[] = [];
    for (const [name, r] of snap.resources) {
      if (!wanted(name)) continue;
      const version = digest(r.any.value);
      if (has.get(name) === version) continue;
      resources.push({ name, version, resource: r.any });
      has.set(name, version);
    }
    const removed: string[] = [];
    for (const name of [...has.keys()]) {
      if (!snap.resources.has(name) && wanted(name)) {
        removed.push(name);
        has.delete(name);
      }
    }
    s.has.set(typeUrl, has);
    if (resources.length === 0 && removed.length === 0) return;
    const nonce = String(++this.nonce);
    s.lastNonce.set(typeUrl, nonce);
    s.call.write({
      system_version_info: snap.version,
      type_url: typeUrl,
      nonce,
      resources,
      removed_resources: removed,
    });
  }

  private record(rec: RecordedRequest): void {
    this.requests.push(rec);
    for (const w of [...this.waiters]) {
      if (w.pred(rec)) {
        this.waiters = this.waiters.filter((x) => x !== w);
        w.resolve(rec);
      }
    }
  }

  private respond(s: StreamState, typeUrl: string, force: boolean): void {
    if (s.delta) {
      this.respondDelta(s, typeUrl);
      return;
    }
    const snap = this.snapshots.get(typeUrl);
    if (!snap) return;
    if (!force && s.sentVersion.get(typeUrl) === snap.version) return;
    let resources = [...snap.resources.entries()];
    if (!WILDCARD.has(typeUrl)) {
      const names = s.names.get(typeUrl) ?? new Set();
      resources = resources.filter(([name]) => names.has(name));
      if (names.size === 0) return;
    }
    const nonce = String(++this.nonce);
    s.lastNonce.set(typeUrl, nonce);
    s.sentVersion.set(typeUrl, snap.version);
    s.call.write({
      version_info: snap.version,
      type_url: typeUrl,
      nonce,
      resources: resources.map(([, r]) => r.any),
    });
  }
}

function digest(bytes: Uint8Array): string {
  return createHash('sha1').update(bytes).digest('hex').slice(0, 12);
}

export async function startTestXdsServer(port = 0): Promise<TestXdsServer> {
  return new TestXdsServer().start(port);
}
