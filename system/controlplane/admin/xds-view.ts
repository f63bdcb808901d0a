// /snapshots/xds: per proxy role with a connected proxy, the resources exactly as sent (decoded from the Any bytes on
// the wire; private keys redacted as Envoy's config_dump shows them), the snapshot and per-type versions, and each
// connected node's ACK/NACK state.
import { unpackAny } from '../../shared/envoy/protojson.ts';
import { redactSecrets } from '../../shared/envoy/redact.ts';
import { PUSH_ORDER, type SnapshotCache, TYPE_SHORT } from '../serve/cache.ts';
import type { ProxyStream } from '../serve/server.ts';

export interface XdsView {
  data: Record<string, unknown>;
  error: string;
  reason?: string;
}

export function xdsView(cache: SnapshotCache, proxies: ProxyStream[]): XdsView {
  // Only proxies whose role has a snapshot (a Gateway that produced them) count (contract section 3).
  const byRole = new Map<string, ProxyStream[]>();
  const orphans: ProxyStream[] = [];
  for (const p of proxies) {
    if (!cache.get(p.role)) orphans.push(p);
    else byRole.set(p.role, [...(byRole.get(p.role) ?? []), p]);
  }
  if (!byRole.size) {
    const roles = cache.roles();
    const why = roles.length
      ? `no gateway proxy is connected (snapshots exist for ${roles.join(', ')}; is the proxy running and pointed at this control plane's xDS port?)`
      : 'no gateway proxy is connected, and no Gateway of class gwvendor has produced a snapshot: create a Gateway (contract section 7)';
    const extra = orphans.length
      ? `; connected without a Gateway: ${orphans.map((p) => `${p.nodeId} (role ${p.role})`).join(', ')}`
      : '';
    return { data: {}, error: '', reason: why + extra };
  }
  const data: Record<string, unknown> = {};
  for (const role of [...byRole.keys()].sort()) {
    const snap = cache.get(role)!;
    const proxiesOut: Record<string, unknown> = {};
    for (const p of byRole.get(role)!.sort((a, b) => a.nodeId.localeCompare(b.nodeId) || a.streamId - b.streamId)) {
      const types: Record<string, unknown> = {};
      for (const t of PUSH_ORDER) {
        const st = p.types.get(t);
        if (!st) continue;
        types[TYPE_SHORT[t]] = {
          type_url: t,
          status: st.status,
          ...(st.names.length ? { resource_names: st.names } : {}),
          ...(st.sentVersion !== undefined ? { version_sent: st.sentVersion, sent_at: st.sentAt?.toISOString() } : {}),
          ...(st.ackedVersion !== undefined
            ? { version_acked: st.ackedVersion, acked_at: st.ackedAt?.toISOString() }
            : {}),
          ...(st.lastError
            ? {
                last_nack: {
                  version: st.lastError.version,
                  detail: st.lastError.detail,
                  at: st.lastError.at.toISOString(),
                },
              }
            : {}),
        };
      }
      const key = proxiesOut[p.nodeId] ? `${p.nodeId} (stream ${p.streamId})` : p.nodeId;
      proxiesOut[key] = { cluster: p.cluster, peer: p.peer, connected_since: p.connectedAt.toISOString(), types };
    }
    if (!snap) {
      data[role] = {
        error: 'a proxy is connected with this role, but no Gateway produces a snapshot for it',
        proxies: proxiesOut,
      };
      continue;
    }
    const resources: Record<string, unknown[]> = {};
    const versions: Record<string, string> = {};
    for (const t of PUSH_ORDER) {
      resources[TYPE_SHORT[t]] = [...snap.types[t].byName.values()].map((r) => redactSecrets(unpackAny(r.any)));
      versions[TYPE_SHORT[t]] = snap.types[t].version;
    }
    data[role] = {
      gateway: snap.gateway,
      version: snap.version,
      created: snap.createdAt.toISOString(),
      type_versions: versions,
      proxies: proxiesOut,
      ...resources,
    };
  }
  return { data, error: '' };
}
