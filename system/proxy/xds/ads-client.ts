// ADS client (envoy.service.discovery.v3.AggregatedDiscoveryService) on @grpc/grpc-js with the shared service
// definition: state of the world (StreamAggregatedResources, the default) or incremental (DeltaAggregatedResources,
// bootstrap api_type DELTA_GRPC). Per type URL it keeps the subscribed names, the last
// accepted version and the last nonce; every response is answered with its nonce (ACK with the new version, or
// NACK with the previous version and error_detail). Responses are handled one at a time, in arrival order, so a
// CDS update is applied before the EDS response that follows it. A broken stream is re-opened with jittered
// exponential back-off and every subscription re-sent with its last accepted version.
import { createHash } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { decode } from '../../shared/envoy/protojson.ts';
import { adsService, typeNameOf } from '../../shared/envoy/protos.ts';
import type { Logger, LogRegistry } from '../log.ts';
import type { Gauge, StatsStore } from '../stats.ts';

type J = Record<string, any>;

export interface DecodedResource {
  name: string;
  json: J;
}

export interface TypeHandler {
  /** true: the client subscribes to every resource of the type (LDS, CDS), as Envoy does. */
  wildcard: boolean;
  /** Validates and applies a response; returns the NACK reason, or undefined to ACK. */
  onResponse(resources: DecodedResource[], version: string, raw: { nonce: string }): Promise<string | undefined>;
  /** The stream failed before any response arrived (for init timeouts and stats). */
  onStreamFailure?(): void;
  /** How long the response took from arrival to its ACK/NACK (Envoy's update_duration), and what it carried. */
  onHandled?(ms: number, resources: DecodedResource[], accepted: boolean): void;
}

export interface AdsClientOptions {
  target: string;
  /** The static cluster named in the bootstrap's ads_config (for log lines). */
  clusterName: string;
  node: J;
  setNodeOnFirstMessageOnly: boolean;
  logs: LogRegistry;
  stats: StatsStore;
  backoffBaseMs?: number;
  backoffMaxMs?: number;
  /** Incremental xDS: changed resources and removed names per response, subscriptions as deltas. */
  delta?: boolean;
}

interface TypeState {
  handler: TypeHandler;
  names: Set<string>;
  version: string;
  nonce: string;
  /** Names changed while a response was being processed: re-send after the ACK/NACK. */
  dirty: boolean;
  /**
   * Decoded resources of the last response by a digest of their bytes. SotW resends every resource on each update;
   * an unchanged one is handed over as the same JSON object, so the managers skip it without decoding,
   * validating or compiling it again.
   */
  decoded: Map<string, J>;
  /** A request has been sent on the current stream. */
  requested: boolean;
  /** Delta: the accepted resources by name, with their versions (initial_resource_versions on reconnect). */
  accepted: Map<string, { version: string; json: J }>;
  /** Delta: the names the server was told about on this stream. */
  subscribed: Set<string>;
}

/** Envoy's ADS request order when (re)starting a stream. */
const ORDER = [
  'type.googleapis.com/envoy.config.cluster.v3.Cluster',
  'type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment',
  'type.googleapis.com/envoy.config.listener.v3.Listener',
  'type.googleapis.com/envoy.config.route.v3.RouteConfiguration',
];

type Call = grpc.ClientDuplexStream<J, J>;

export class AdsClient {
  private readonly opts: AdsClientOptions;
  private readonly types = new Map<string, TypeState>();
  private client: grpc.Client | undefined;
  private call: Call | undefined;
  private stopped = false;
  private nodeSent = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private attempt = 0;
  private queue: Promise<void> = Promise.resolve();
  private processing = 0;
  private readonly log: Logger;
  private readonly connected: Gauge;
  private closedSince: number | undefined;
  /** Every request sent, newest last (bounded): tests and debugging read it. */
  readonly sent: J[] = [];

  constructor(opts: AdsClientOptions) {
    this.opts = opts;
    this.log = opts.logs.logger('config');
    this.connected = opts.stats.gauge('control_plane.connected_state');
    opts.stats.gauge('control_plane.pending_requests');
    opts.stats.counter('control_plane.rate_limit_enforced');
  }

  watch(typeUrl: string, handler: TypeHandler): void {
    this.types.set(typeUrl, {
      handler,
      names: new Set(),
      version: '',
      nonce: '',
      dirty: false,
      requested: false,
      decoded: new Map(),
      accepted: new Map(),
      subscribed: new Set(),
    });
  }

  /** Changes the names subscribed for a non-wildcard type (EDS cluster names, RDS route config names). */
  setNames(typeUrl: string, names: Iterable<string>): void {
    const t = this.types.get(typeUrl);
    if (!t) return;
    const next = new Set(names);
    if (next.size === t.names.size && [...next].every((n) => t.names.has(n))) return;
    t.names = next;
    if (this.processing > 0) t.dirty = true;
    else this.sendRequest(typeUrl, t);
  }

  /** Delta: subscribe and unsubscribe the difference between the names wanted and those sent on this stream. */
  private sendDeltaSubscription(typeUrl: string, t: TypeState): void {
    if (!this.call || t.handler.wildcard) return;
    const subscribe = [...t.names].filter((n) => !t.subscribed.has(n)).sort();
    const unsubscribe = [...t.subscribed].filter((n) => !t.names.has(n)).sort();
    if (subscribe.length === 0 && unsubscribe.length === 0) return;
    t.subscribed = new Set(t.names);
    for (const n of unsubscribe) t.accepted.delete(n);
    this.writeDelta(typeUrl, t, { resource_names_subscribe: subscribe, resource_names_unsubscribe: unsubscribe });
  }

  isConnected(): boolean {
    return this.connected.value === 1;
  }

  versionOf(typeUrl: string): string {
    return this.types.get(typeUrl)?.version ?? '';
  }

  start(): void {
    if (!this.client) {
      const Ctor = grpc.makeGenericClientConstructor(adsService(), 'AggregatedDiscoveryService');
      this.client = new Ctor(this.opts.target, grpc.credentials.createInsecure(), {
        'grpc.keepalive_time_ms': 30_000,
        'grpc.initial_reconnect_backoff_ms': 200,
        'grpc.max_reconnect_backoff_ms': 5_000,
      });
    }
    this.openStream();
  }

  private openStream(): void {
    if (this.stopped || !this.client) return;
    this.nodeSent = false;
    const delta = this.opts.delta === true;
    const method = (this.client as unknown as Record<string, () => Call>)[
      delta ? 'DeltaAggregatedResources' : 'StreamAggregatedResources'
    ]!;
    const call = method.call(this.client);
    this.call = call;
    let sawData = false;
    const markConnected = () => {
      if (this.connected.value !== 1) {
        this.connected.set(1);
        this.attempt = 0;
        this.closedSince = undefined;
      }
    };
    call.on('metadata', markConnected);
    call.on('data', (resp: J) => {
      sawData = true;
      markConnected();
      this.enqueue(resp, call);
    });
    const onEnd = (status: grpc.StatusObject | undefined) => {
      if (this.call !== call) return;
      this.call = undefined;
      this.connected.set(0);
      this.closedSince ??= Date.now();
      if (this.stopped) return;
      const code = status?.code ?? grpc.status.UNAVAILABLE;
      const details = status?.details ?? 'stream closed';
      const ago = Math.round((Date.now() - this.closedSince) / 1000);
      this.log.warn(
        `${delta ? 'DeltaAggregatedResources' : 'StreamAggregatedResources'} gRPC config stream to ${this.opts.clusterName} closed${ago > 0 ? ` since ${ago}s ago` : ''}: ${code}, ${details}`,
      );
      if (!sawData) for (const t of this.types.values()) t.handler.onStreamFailure?.();
      for (const t of this.types.values()) t.requested = false;
      this.scheduleReconnect();
    };
    call.on('status', onEnd);
    call.on('error', (err: grpc.ServiceError) =>
      onEnd({ code: err.code, details: err.details, metadata: err.metadata }),
    );
    for (const typeUrl of ORDER) {
      const t = this.types.get(typeUrl);
      if (!t || !(t.handler.wildcard || t.names.size > 0)) continue;
      if (delta) {
        // A new stream: subscribe afresh and say which resources (at which versions) this proxy already has.
        t.subscribed = new Set(t.names);
        const initial: Record<string, string> = {};
        for (const [name, r] of t.accepted) initial[name] = r.version;
        this.writeDelta(typeUrl, t, {
          resource_names_subscribe: t.handler.wildcard ? [] : [...t.names].sort(),
          initial_resource_versions: initial,
        });
      } else {
        this.sendRequest(typeUrl, t, true);
      }
    }
  }

  private scheduleReconnect(): void {
    const base = this.opts.backoffBaseMs ?? 500;
    const max = this.opts.backoffMaxMs ?? 30_000;
    const ceiling = Math.min(max, base * 2 ** this.attempt);
    this.attempt++;
    const wait = Math.max(10, Math.floor(Math.random() * ceiling));
    this.log.debug(`gRPC config stream to ${this.opts.clusterName}: retrying in ${wait}ms`);
    this.retryTimer = setTimeout(() => this.openStream(), wait);
  }

  private enqueue(resp: J, call: Call): void {
    this.processing++;
    const arrived = performance.now();
    this.queue = this.queue
      .then(() => this.handle(resp, call, arrived))
      .catch((err) => this.log.error(`xDS response handling failed: ${(err as Error).stack ?? err}`))
      .finally(() => {
        this.processing--;
        if (this.processing === 0) this.flushDirty();
      });
  }

  private async handle(resp: J, call: Call, arrived: number): Promise<void> {
    if (this.opts.delta) return this.handleDelta(resp, call, arrived);
    const typeUrl = String(resp.type_url ?? '');
    const version = String(resp.version_info ?? '');
    const nonce = String(resp.nonce ?? '');
    const t = this.received(typeUrl, version, nonce);
    if (!t) return;
    let error: string | undefined;
    const resources: DecodedResource[] = [];
    const typeName = typeNameOf(typeUrl);
    const decoded = new Map<string, J>();
    for (const any of (resp.resources ?? []) as Array<{ type_url: string; value: Uint8Array }>) {
      if (any.type_url !== typeUrl) {
        error = `type URL ${any.type_url} embedded in an individual Any does not match the message-wide type URL ${typeUrl} in DiscoveryResponse`;
        break;
      }
      try {
        const digest = createHash('sha1').update(any.value).digest('base64');
        const json = t.decoded.get(digest) ?? decode(typeName, any.value);
        decoded.set(digest, json);
        const name = String(json.name ?? json.cluster_name ?? '');
        resources.push({ name, json });
      } catch (err) {
        error = `cannot decode ${typeName}: ${(err as Error).message}`;
        break;
      }
    }
    // Non-wildcard types (EDS, RDS) may send a subset: keep the digests of resources not in this response.
    if (error === undefined) t.decoded = t.handler.wildcard ? decoded : new Map([...t.decoded, ...decoded]);
    if (error === undefined) error = await this.apply(t, resources, version, nonce);
    if (call !== this.call) return; // the stream went away meanwhile; the new one re-requests
    if (error === undefined) {
      t.version = version;
      this.write(typeUrl, t, { version_info: version, response_nonce: nonce });
      t.handler.onHandled?.(performance.now() - arrived, resources, true);
    } else {
      t.handler.onHandled?.(performance.now() - arrived, resources, false);
      this.log.warn(`gRPC config for ${typeUrl} rejected: ${error}`);
      this.write(typeUrl, t, {
        version_info: t.version,
        response_nonce: nonce,
        error_detail: { code: grpc.status.INTERNAL, message: error },
      });
    }
    t.dirty = false;
  }

  /** The subscription a response is for, its nonce noted; undefined (and a warning) when nobody subscribes to it. */
  private received(typeUrl: string, version: string, nonce: string): TypeState | undefined {
    const t = this.types.get(typeUrl);
    if (!t) {
      this.log.warn(`Ignoring the message for type URL ${typeUrl} as it has no current subscribers.`);
      return undefined;
    }
    t.nonce = nonce;
    this.log.debug(`Received gRPC message for ${typeUrl} at version ${version}`);
    return t;
  }

  /** Hands the decoded resources to the type's handler: undefined when it accepts them, else why it rejects them. */
  private async apply(t: TypeState, resources: DecodedResource[], version: string, nonce: string) {
    try {
      return await t.handler.onResponse(resources, version, { nonce });
    } catch (err) {
      return (err as Error).message;
    }
  }

  private flushDirty(): void {
    for (const typeUrl of ORDER) {
      const t = this.types.get(typeUrl);
      if (t?.dirty) {
        t.dirty = false;
        this.sendRequest(typeUrl, t);
      }
    }
  }

  /** A (re-)subscription: the last accepted version and, on an open stream, the last nonce. */
  private sendRequest(typeUrl: string, t: TypeState, initial = false): void {
    if (!this.call) return;
    if (this.opts.delta) {
      this.sendDeltaSubscription(typeUrl, t);
      return;
    }
    if (!t.handler.wildcard && t.names.size === 0 && !t.requested) return;
    this.write(typeUrl, t, { version_info: t.version, response_nonce: initial ? '' : t.nonce });
  }

  private write(typeUrl: string, t: TypeState, fields: J): void {
    const req = { ...fields, type_url: typeUrl, resource_names: t.handler.wildcard ? [] : [...t.names].sort() };
    this.send(typeUrl, t, req, 'DiscoveryRequest', !this.opts.setNodeOnFirstMessageOnly || !this.nodeSent);
  }

  /** Writes a request on the open stream (none: dropped), the node with it when asked, and keeps it in `sent`. */
  private send(typeUrl: string, t: TypeState, req: J, kind: string, withNode: boolean): void {
    const call = this.call;
    if (!call) return;
    if (withNode) {
      req.node = this.opts.node;
      this.nodeSent = true;
    }
    t.requested = true;
    this.sent.push(req);
    if (this.sent.length > 200) this.sent.shift();
    if (this.log.on('trace'))
      this.log.trace(`Sending ${kind} for ${typeUrl}: ${JSON.stringify({ ...req, node: undefined })}`);
    call.write(req);
  }

  /**
   * A DeltaDiscoveryResponse: changed resources (name, version, resource) and removed names. The handlers keep their
   * state-of-the-world contract: wildcard types get the whole accepted set with the changes applied, named types the
   * changed resources. Nothing is kept from a rejected response.
   */
  private async handleDelta(resp: J, call: Call, arrived: number): Promise<void> {
    const typeUrl = String(resp.type_url ?? '');
    const version = String(resp.system_version_info ?? '');
    const nonce = String(resp.nonce ?? '');
    const t = this.received(typeUrl, version, nonce);
    if (!t) return;
    const typeName = typeNameOf(typeUrl);
    const next = new Map(t.accepted);
    const changed: DecodedResource[] = [];
    let error: string | undefined;
    for (const r of (resp.resources ?? []) as Array<{
      name: string;
      version: string;
      resource?: { type_url: string; value: Uint8Array };
    }>) {
      if (!r.resource) {
        next.delete(r.name);
        continue;
      }
      if (r.resource.type_url !== typeUrl) {
        error = `type URL ${r.resource.type_url} embedded in an individual Any does not match the message-wide type URL ${typeUrl} in DeltaDiscoveryResponse`;
        break;
      }
      try {
        const json = decode(typeName, r.resource.value);
        const name = String(json.name ?? json.cluster_name ?? r.name);
        next.set(name, { version: String(r.version ?? ''), json });
        changed.push({ name, json });
      } catch (err) {
        error = `cannot decode ${typeName}: ${(err as Error).message}`;
        break;
      }
    }
    for (const name of (resp.removed_resources ?? []) as string[]) next.delete(name);
    const resources: DecodedResource[] = t.handler.wildcard
      ? [...next.entries()].map(([name, r]) => ({ name, json: r.json }))
      : changed;
    if (error === undefined) error = await this.apply(t, resources, version, nonce);
    if (call !== this.call) return;
    if (error === undefined) {
      t.accepted = next;
      t.version = version;
      this.writeDelta(typeUrl, t, { response_nonce: nonce });
      t.handler.onHandled?.(performance.now() - arrived, changed, true);
    } else {
      t.handler.onHandled?.(performance.now() - arrived, changed, false);
      this.log.warn(`gRPC config for ${typeUrl} rejected: ${error}`);
      this.writeDelta(typeUrl, t, {
        response_nonce: nonce,
        error_detail: { code: grpc.status.INTERNAL, message: error },
      });
    }
    t.dirty = false;
  }

  private writeDelta(typeUrl: string, t: TypeState, fields: J): void {
    // Delta streams carry the node on the first request only.
    this.send(typeUrl, t, { type_url: typeUrl, ...fields }, 'DeltaDiscoveryRequest', !this.nodeSent);
  }

  stop(): void {
    this.stopped = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    const call = this.call;
    this.call = undefined;
    call?.cancel();
    this.client?.close();
    this.connected.set(0);
  }
}
