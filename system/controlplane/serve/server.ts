// The ADS server: State-of-the-World AggregatedDiscoveryService over @grpc/grpc-js. Each stream is one proxy; its
// first request names the node (id, metadata.role). A request opens a "watch" for its type; the server answers
// when the role's snapshot has a version the proxy was not sent yet (or when the subscribed names change), so a NACKed
// version is never resent: the next one is. Snapshot changes are pushed in the order CDS, EDS, LDS, RDS.
import * as grpc from '@grpc/grpc-js';
import { adsService, TYPE_URL } from '../../shared/envoy/protos.ts';
import { bindGrpc, shutdownGrpc } from '../../shared/grpc-listen.ts';
import type { Logger } from '../../shared/log.ts';
import { PUSH_ORDER, type Snapshot, type SnapshotCache, TYPE_SHORT, type TypeUrl } from './cache.ts';

export const CONTROL_PLANE_ID = 'gwvendor';

export type ClientStatus = 'REQUESTED' | 'SENT' | 'ACKED' | 'NACKED';

export interface TypeState {
  typeUrl: TypeUrl;
  /** Resource names asked for; empty means all (wildcard). */
  names: string[];
  status: ClientStatus;
  sentVersion?: string;
  sentNonce?: string;
  sentAt?: Date;
  ackedVersion?: string;
  ackedAt?: Date;
  lastError?: { version: string; nonce: string; detail: string; at: Date };
  /** A request is waiting for an answer (SotW watch). */
  watching: boolean;
}

export interface ProxyStream {
  streamId: number;
  nodeId: string;
  role: string;
  cluster: string;
  peer: string;
  connectedAt: Date;
  types: Map<TypeUrl, TypeState>;
}

export interface AdsEvents {
  onConnect?(s: ProxyStream): void;
  onDisconnect?(s: ProxyStream): void;
  onPush?(s: ProxyStream, typeUrl: TypeUrl, version: string, count: number): void;
  onAck?(s: ProxyStream, typeUrl: TypeUrl, version: string): void;
  onNack?(s: ProxyStream, typeUrl: TypeUrl, version: string, detail: string): void;
}

interface DiscoveryRequest {
  version_info?: string;
  node?: { id?: string; cluster?: string; metadata?: unknown };
  resource_names?: string[];
  type_url?: string;
  response_nonce?: string;
  error_detail?: { code?: number; message?: string } | null;
}

/** A google.protobuf.Struct as @grpc/proto-loader hands it over (oneofs named in `kind`) → plain JSON. */
export function structToJson(s: unknown): Record<string, unknown> {
  const fields = (s as { fields?: Record<string, unknown> } | undefined)?.fields ?? {};
  return Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, valueToJson(v)]));
}

function valueToJson(v: unknown): unknown {
  // protobufjs keeps the well-known types in camelCase even when the Envoy messages use snake_case.
  const x = v as Record<string, unknown>;
  const val = (camel: string, snake: string) => x?.[camel] ?? x?.[snake];
  let kind = String(x?.kind ?? '').replace(/_([a-z])/g, (_m, c: string) => c.toUpperCase());
  // With defaults on, every member of the oneof is filled in; a sender that wrote more than one member (seen with
  // messages built from another protobufjs root) makes `kind` name the last. A non-default value wins.
  const str = val('stringValue', 'string_value');
  if (typeof str === 'string' && str !== '') kind = 'stringValue';
  else if (val('structValue', 'struct_value')) kind = 'structValue';
  else if (val('listValue', 'list_value')) kind = 'listValue';
  switch (kind) {
    case 'stringValue':
      return val('stringValue', 'string_value');
    case 'numberValue':
      return val('numberValue', 'number_value');
    case 'boolValue':
      return val('boolValue', 'bool_value');
    case 'structValue':
      return structToJson(val('structValue', 'struct_value'));
    case 'listValue':
      return ((val('listValue', 'list_value') as { values?: unknown[] })?.values ?? []).map(valueToJson);
    default:
      return null;
  }
}

const KNOWN_TYPES = new Set<string>(PUSH_ORDER);

export class AdsServer {
  private readonly server = new grpc.Server({ 'grpc.max_send_message_length': 64 * 1024 * 1024 });
  private readonly streams = new Map<number, { s: ProxyStream; call: grpc.ServerDuplexStream<any, any> }>();
  private nextStream = 1;
  private nonceSeq = 0;
  private readonly cache: SnapshotCache;
  private readonly log: Logger;
  private readonly events: AdsEvents;
  port = 0;

  constructor(cache: SnapshotCache, log: Logger, events: AdsEvents = {}) {
    this.cache = cache;
    this.log = log;
    this.events = events;
    cache.onChange((snap) => this.pushSnapshot(snap));
  }

  /**
   * Serves ADS. The service is defined here rather than at construction: it loads the Envoy protos (~50 ms), which
   * the control plane's start does while its informers' first requests are out (controlplane.ts start()).
   */
  async listen(port: number, host = '0.0.0.0'): Promise<number> {
    this.server.addService(adsService(), {
      StreamAggregatedResources: (call: grpc.ServerDuplexStream<any, any>) => this.onStream(call),
      DeltaAggregatedResources: (call: grpc.ServerDuplexStream<any, any>) => {
        call.emit('error', { code: grpc.status.UNIMPLEMENTED, details: 'delta xDS is not supported; use SotW ADS' });
      },
    });
    this.port = await bindGrpc(this.server, host, port);
    this.log.info('xDS server listening', { address: `${host}:${this.port}` });
    return this.port;
  }

  async close(): Promise<void> {
    for (const { call } of this.streams.values()) call.end();
    await shutdownGrpc(this.server);
  }

  /** Connected proxies (one entry per stream). */
  connected(): ProxyStream[] {
    return [...this.streams.values()].map((x) => x.s);
  }

  private onStream(call: grpc.ServerDuplexStream<any, any>): void {
    const streamId = this.nextStream++;
    let s: ProxyStream | undefined;
    const peer = call.getPeer();
    call.on('data', (req: DiscoveryRequest) => {
      try {
        if (!s) {
          const node = req.node;
          const meta = structToJson(node?.metadata);
          const role = typeof meta.role === 'string' ? meta.role : '';
          if (!node?.id || !role) {
            const why = !node?.id ? 'the first request has no node.id' : 'node.metadata.role is missing';
            this.log.warn('rejecting xDS stream', { peer, reason: why });
            call.emit('error', { code: grpc.status.INVALID_ARGUMENT, details: `${why}: set it in the bootstrap` });
            return;
          }
          s = {
            streamId,
            nodeId: node.id,
            role,
            cluster: node.cluster ?? '',
            peer,
            connectedAt: new Date(),
            types: new Map(),
          };
          this.streams.set(streamId, { s, call });
          this.log.info('proxy connected', { node: s.nodeId, role, peer });
          this.events.onConnect?.(s);
        }
        this.onRequest(s, call, req);
      } catch (err) {
        this.log.error('xDS request failed', { err: err as Error, node: s?.nodeId });
      }
    });
    const done = () => {
      if (!s || !this.streams.has(streamId)) return;
      this.streams.delete(streamId);
      this.log.info('proxy disconnected', { node: s.nodeId, role: s.role });
      this.events.onDisconnect?.(s);
    };
    call.on('end', () => {
      done();
      call.end();
    });
    call.on('error', (err) => {
      this.log.debug('xDS stream error', { err, node: s?.nodeId });
      done();
    });
    call.on('cancelled', done);
    call.on('close', done);
  }

  private onRequest(s: ProxyStream, call: grpc.ServerDuplexStream<any, any>, req: DiscoveryRequest): void {
    const typeUrl = req.type_url ?? '';
    if (!KNOWN_TYPES.has(typeUrl)) {
      this.log.debug('ignoring request for an unserved type', { node: s.nodeId, type: typeUrl });
      return;
    }
    const t = typeUrl as TypeUrl;
    let st = s.types.get(t);
    if (!st) {
      st = { typeUrl: t, names: [], status: 'REQUESTED', watching: false };
      s.types.set(t, st);
    }
    const nonce = req.response_nonce ?? '';
    if (nonce) {
      // Only the answer to our latest response counts; older nonces are stale (the spec: no response).
      if (nonce !== st.sentNonce) {
        this.log.debug('stale nonce', { node: s.nodeId, type: TYPE_SHORT[t], nonce, latest: st.sentNonce });
        return;
      }
      const detail = req.error_detail?.message;
      if (req.error_detail && (detail || req.error_detail.code)) {
        st.status = 'NACKED';
        st.lastError = {
          version: st.sentVersion ?? '',
          nonce,
          detail: detail ?? `code ${req.error_detail.code}`,
          at: new Date(),
        };
        this.log.warn('proxy rejected configuration (NACK)', {
          node: s.nodeId,
          role: s.role,
          type: t,
          version: st.sentVersion,
          keeps: req.version_info || '(none)',
          detail: st.lastError.detail,
        });
        this.events.onNack?.(s, t, st.sentVersion ?? '', st.lastError.detail);
      } else {
        st.status = 'ACKED';
        st.ackedVersion = req.version_info ?? '';
        st.ackedAt = new Date();
        this.log.debug('proxy acknowledged', { node: s.nodeId, type: TYPE_SHORT[t], version: st.ackedVersion });
        this.events.onAck?.(s, t, st.ackedVersion);
      }
    }
    const names = [...(req.resource_names ?? [])].sort();
    const namesChanged = names.join('\n') !== st.names.join('\n');
    st.names = names;
    st.watching = true;
    const snap = this.cache.get(s.role);
    if (!snap) return;
    if (
      st.sentVersion !== snap.types[t].version ||
      (namesChanged && (t === TYPE_URL.routeConfiguration || t === TYPE_URL.clusterLoadAssignment))
    ) {
      this.respond(s, call, snap, t);
    }
  }

  private respond(s: ProxyStream, call: grpc.ServerDuplexStream<any, any>, snap: Snapshot, t: TypeUrl): void {
    const st = s.types.get(t)!;
    const typed = snap.types[t];
    const wanted =
      st.names.length && (t === TYPE_URL.routeConfiguration || t === TYPE_URL.clusterLoadAssignment)
        ? st.names
        : undefined;
    const resources = wanted
      ? wanted.flatMap((n) => {
          const r = typed.byName.get(n);
          return r ? [r] : [];
        })
      : [...typed.byName.values()];
    const nonce = String(++this.nonceSeq);
    call.write({
      version_info: typed.version,
      resources: resources.map((r) => ({ type_url: r.any.type_url, value: Buffer.from(r.any.value) })),
      type_url: t,
      nonce,
      control_plane: { identifier: CONTROL_PLANE_ID },
    });
    st.sentVersion = typed.version;
    st.sentNonce = nonce;
    st.sentAt = new Date();
    st.status = 'SENT';
    st.watching = false;
    this.log.debug('pushed', {
      node: s.nodeId,
      type: TYPE_SHORT[t],
      version: typed.version,
      resources: resources.length,
      nonce,
    });
    this.events.onPush?.(s, t, typed.version, resources.length);
  }

  /** A new snapshot for a role: every watching stream of the role gets the changed types, in push order. */
  private pushSnapshot(snap: Snapshot): void {
    for (const { s, call } of this.streams.values()) {
      if (s.role !== snap.role) continue;
      for (const t of PUSH_ORDER) {
        const st = s.types.get(t);
        if (st?.watching && st.sentVersion !== snap.types[t].version) this.respond(s, call, snap, t);
      }
    }
  }
}
