// What the proxies' NACKs mean for the cluster resources: a rejected version is attributed to the resources whose
// translation findings (regexes and the like, unchecked with validation off) were in it, and to their Gateway. The
// attribution feeds the pipeline's ProxyRejections input (so statuses show it), Events and a log line; an ACK of a
// later version clears it.
import type { Logger } from '../../shared/log.ts';
import { watchedKind } from '../kube/watched.ts';
import type { Pipeline } from '../pipeline.ts';
import type { Rejection } from '../status/build.ts';
import type { EventSink } from '../status/events.ts';
import type { SnapshotCache, TypeUrl } from './cache.ts';
import type { ProxyStream } from './server.ts';

export class RejectionTracker {
  /** `<gateway>|<type>` → the rejection and the resource keys (`Kind/ns/name`) it is attributed to */
  private readonly active = new Map<string, { rej: Rejection; targets: string[] }>();
  private readonly p: Pipeline;
  private readonly cache: SnapshotCache;
  private readonly log: Logger;
  private readonly events?: EventSink;

  constructor(p: Pipeline, cache: SnapshotCache, log: Logger, events?: EventSink) {
    this.p = p;
    this.cache = cache;
    this.log = log;
    this.events = events;
  }

  onNack(s: ProxyStream, typeUrl: TypeUrl, version: string, detail: string): void {
    const gateway = this.cache.get(s.role)?.gateway;
    if (!gateway) return;
    const ir = this.p.gateways.get(gateway)?.ir;
    // In strict mode the findings were left out of the config, so they cannot be what the proxy rejected.
    const findings = ir?.validation === 'off' ? ir.findings : [];
    const targets = [
      ...new Set([
        `Gateway/${gateway}`,
        ...findings.map((f) => `${f.resource.kind}/${f.resource.namespace}/${f.resource.name}`),
      ]),
    ];
    const rej: Rejection = { gateway, node: s.nodeId, typeUrl, version, detail };
    this.active.set(`${gateway}|${typeUrl}`, { rej, targets });
    this.log.warn('NACK attributed', {
      gateway,
      node: s.nodeId,
      type: typeUrl,
      version,
      resources: targets,
      findings: findings.map(
        (f) => `${f.resource.kind}/${f.resource.namespace}/${f.resource.name} ${f.field}: ${f.message}`,
      ),
    });
    for (const t of targets) {
      const [kind, ns, name] = t.split('/');
      const obj = this.p.inputFor(kind)?.get(`${ns}/${name}`);
      this.events?.emit(
        { apiVersion: watchedKind(kind)?.apiVersion ?? 'v1', kind, namespace: ns, name, uid: obj?.metadata?.uid },
        'Warning',
        'Rejected',
        `proxy ${s.nodeId} rejected ${typeUrl.split('.').pop()} version ${version} (validation is ${ir?.validation ?? 'unknown'}): ${detail}`,
      );
    }
    this.publish();
  }

  onAck(s: ProxyStream, typeUrl: TypeUrl, version: string): void {
    const gateway = this.cache.get(s.role)?.gateway;
    if (!gateway) return;
    const k = `${gateway}|${typeUrl}`;
    const a = this.active.get(k);
    if (!a || Number(version) <= Number(a.rej.version)) return;
    this.active.delete(k);
    this.log.info('rejection cleared: a later version was accepted', {
      gateway,
      node: s.nodeId,
      type: typeUrl,
      version,
    });
    this.publish();
  }

  /** A deleted snapshot (Gateway gone) clears its rejections. */
  forgetGateway(gateway: string): void {
    let changed = false;
    for (const k of [...this.active.keys()]) {
      if (k.startsWith(`${gateway}|`)) {
        this.active.delete(k);
        changed = true;
      }
    }
    if (changed) this.publish();
  }

  private publish(): void {
    const byTarget = new Map<string, Rejection[]>();
    for (const { rej, targets } of this.active.values()) {
      for (const t of targets) byTarget.set(t, [...(byTarget.get(t) ?? []), rej]);
    }
    for (const key of this.p.rejections.keys()) if (!byTarget.has(key)) this.p.rejections.delete(key);
    for (const [key, rejections] of byTarget) this.p.rejections.upsert({ key, rejections });
  }
}
