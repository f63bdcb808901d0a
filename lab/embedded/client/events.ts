// Kubernetes Events as the kubelet and the controllers of the embedded cluster record them (core/v1 Event:
// involvedObject, reason, message, type, source, count, first/lastTimestamp). Repeats of the same reason and message
// for the same object bump the count of one Event, which is what `kubectl describe` shows as "x3 over 20s".
import { randomBytes } from 'node:crypto';
import type { KObject } from '../../../system/shared/kobject.ts';
import type { Logger } from '../../../system/shared/log.ts';
import type { KubeClient } from './kube-client.ts';

export interface EventTarget {
  apiVersion?: string;
  kind: string;
  metadata: { name: string; namespace?: string; uid: string; resourceVersion?: string };
}

export type EventType = 'Normal' | 'Warning';

function rfc3339(d = new Date()): string {
  return d.toISOString().replace(/\.\d+Z$/, 'Z');
}

export class EventRecorder {
  private readonly client: KubeClient;
  private readonly component: string;
  private readonly host?: string;
  private readonly log?: Logger;
  private readonly seen = new Map<string, { name: string; namespace: string; count: number; chain: Promise<void> }>();

  constructor(client: KubeClient, source: { component: string; host?: string }, log?: Logger) {
    this.client = client;
    this.component = source.component;
    this.host = source.host;
    this.log = log;
  }

  /** Records an event; never throws (events are best effort, as in Kubernetes). */
  record(
    obj: EventTarget | KObject,
    type: EventType,
    reason: string,
    message: string,
    fieldPath?: string,
  ): Promise<void> {
    const m = obj.metadata;
    const namespace = m.namespace ?? 'default';
    const key = `${m.uid}|${fieldPath ?? ''}|${reason}|${message}`;
    const prev = this.seen.get(key);
    const now = rfc3339();
    if (prev) {
      prev.count++;
      const count = prev.count;
      prev.chain = prev.chain.then(() =>
        this.client
          .request(
            'PATCH',
            `/api/v1/namespaces/${namespace}/events/${prev.name}`,
            { count, lastTimestamp: now },
            'application/merge-patch+json',
          )
          .then(
            () => undefined,
            (err) => this.log?.debug('event update failed', { err: err as Error, reason }),
          ),
      );
      return prev.chain;
    }
    const name = `${m.name}.${randomBytes(8).toString('hex')}`;
    const body = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name, namespace },
      involvedObject: {
        apiVersion: (obj as EventTarget).apiVersion ?? 'v1',
        kind: (obj as EventTarget).kind ?? 'Pod',
        name: m.name,
        namespace: m.namespace,
        uid: m.uid,
        ...(m.resourceVersion ? { resourceVersion: m.resourceVersion } : {}),
        ...(fieldPath ? { fieldPath } : {}),
      },
      reason,
      message,
      type,
      source: { component: this.component, ...(this.host ? { host: this.host } : {}) },
      reportingComponent: this.component,
      reportingInstance: this.host ?? '',
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
    };
    const entry = { name, namespace, count: 1, chain: Promise.resolve() };
    this.seen.set(key, entry);
    if (this.seen.size > 5000) this.seen.delete(this.seen.keys().next().value as string);
    entry.chain = this.client.request('POST', `/api/v1/namespaces/${namespace}/events`, body).then(
      () => undefined,
      (err) => this.log?.debug('event create failed', { err: err as Error, reason }),
    );
    return entry.chain;
  }
}
