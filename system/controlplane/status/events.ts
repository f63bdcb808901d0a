// Kubernetes Events (core/v1) on the objects the control plane acts on, so `kubectl describe` and `kubectl events`
// show what it did or could not do. A repeat of the same event within 10 minutes bumps its count instead of creating
// another, as kubelet and controllers do. The status writer, the NACK feedback and the deployer report through it.
import { randomBytes } from 'node:crypto';
import { CoreV1Api, type KubeConfig, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import type { Logger } from '../../shared/log.ts';
import type { Metrics } from '../metrics.ts';

export interface EventTarget {
  apiVersion: string;
  kind: string;
  namespace?: string;
  name: string;
  uid?: string;
}

export interface EventSink {
  emit(target: EventTarget, type: 'Normal' | 'Warning', reason: string, message: string): void;
}

const DEDUP_MS = 10 * 60_000;

export class EventRecorder implements EventSink {
  private readonly api: CoreV1Api;
  private readonly recent = new Map<string, { name: string; namespace: string; count: number; at: number }>();
  private readonly log: Logger;
  private readonly instance: string;
  private readonly metrics?: Metrics;

  constructor(kc: KubeConfig, log: Logger, opts: { instance?: string; metrics?: Metrics } = {}) {
    this.api = kc.makeApiClient(CoreV1Api);
    this.log = log;
    this.instance = opts.instance ?? 'gwvendor';
    this.metrics = opts.metrics;
  }

  emit(target: EventTarget, type: 'Normal' | 'Warning', reason: string, message: string): void {
    this.record(target, type, reason, message).catch((err) =>
      this.log.debug('event not recorded', { reason, object: `${target.kind}/${target.name}`, err: err as Error }),
    );
  }

  private async record(
    target: EventTarget,
    type: 'Normal' | 'Warning',
    reason: string,
    message: string,
  ): Promise<void> {
    const namespace = target.namespace ?? 'default';
    const key = `${target.kind}/${namespace}/${target.name}/${target.uid ?? ''}/${reason}/${message}`;
    const now = new Date();
    this.metrics?.events.inc({ reason });
    const prev = this.recent.get(key);
    if (prev && now.getTime() - prev.at < DEDUP_MS) {
      prev.count++;
      prev.at = now.getTime();
      await this.api.patchNamespacedEvent(
        { name: prev.name, namespace: prev.namespace, body: { count: prev.count, lastTimestamp: now.toISOString() } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
      return;
    }
    const name = `${target.name}.${randomBytes(8).toString('hex')}`;
    await this.api.createNamespacedEvent({
      namespace,
      body: {
        metadata: { name, namespace },
        involvedObject: {
          apiVersion: target.apiVersion,
          kind: target.kind,
          name: target.name,
          namespace: target.namespace,
          uid: target.uid,
        },
        reason,
        message: message.length > 1000 ? message.slice(0, 997) + '...' : message,
        type,
        source: { component: 'gwvendor' },
        reportingComponent: 'gateway.gwvendor.dev/gwvendor',
        reportingInstance: this.instance,
        firstTimestamp: now,
        lastTimestamp: now,
        count: 1,
      },
    });
    this.recent.set(key, { name, namespace, count: 1, at: now.getTime() });
    if (this.recent.size > 5000) {
      for (const [k, v] of this.recent) if (now.getTime() - v.at > DEDUP_MS) this.recent.delete(k);
    }
  }
}

/** Collects events in memory (tests, offline runs). */
export class MemoryEvents implements EventSink {
  readonly events: { target: EventTarget; type: string; reason: string; message: string }[] = [];
  emit(target: EventTarget, type: 'Normal' | 'Warning', reason: string, message: string): void {
    this.events.push({ target, type, reason, message });
  }
}
