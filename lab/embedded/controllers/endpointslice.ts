// Service → EndpointSlice and Endpoints, for Services with a selector: the pods it selects that have an IP, each
// with conditions ready/serving/terminating (only ready addresses are ready; Endpoints lists the others as
// notReadyAddresses), ports resolved from targetPort (named ports through the pods' container ports).
import { createHash } from 'node:crypto';
import type { Logger } from '../../../system/shared/log.ts';
import { matchesLabelSet } from '../../../system/shared/selectors.ts';
import { type KubeClient, KubeError } from '../client/kube-client.ts';
import { byUid, namespacedName } from '../client/list-watch.ts';
import { Controller } from './controller.ts';
import { canonicalJson, isPodReady } from './workload-util.ts';

/** Whether a Service's `spec.selector` selects these labels; a Service without one selects no pod here. */
function selects(labels: Record<string, string> | undefined, selector: Record<string, string> | undefined): boolean {
  return !!selector && Object.keys(selector).length > 0 && matchesLabelSet(labels, selector);
}

const MANAGED_BY = 'endpointslice-controller.k8s.io';

export class EndpointSliceController extends Controller {
  private readonly services = this.informer('/api/v1/services', {
    onEvent: (_type, o) => o && this.queue.add(namespacedName(o)),
  });
  private readonly pods = this.informer('/api/v1/pods', {
    key: byUid,
    onEvent: (_type, o, prev) => {
      if (!o) return;
      for (const s of this.services.values()) {
        if (s.metadata.namespace !== o.metadata.namespace) continue;
        const sel = s.spec?.selector;
        if (selects(o.metadata.labels, sel) || (prev && selects(prev.metadata.labels, sel))) {
          this.queue.add(`${s.metadata.namespace}/${s.metadata.name}`);
        }
      }
    },
  });

  constructor(client: KubeClient, log: Logger) {
    super(client, log, { what: 'endpoints', field: 'service' });
  }

  protected async sync(key: string): Promise<void> {
    const svc = this.services.get(key);
    // Services without a selector (like default/kubernetes) have endpoints managed by someone else.
    if (!svc?.spec?.selector || Object.keys(svc.spec.selector).length === 0) return;
    if (svc.metadata.deletionTimestamp) return;
    const ns = svc.metadata.namespace;
    const name = svc.metadata.name;
    const pods = [...this.pods.values()].filter(
      (p) =>
        p.metadata.namespace === ns &&
        selects(p.metadata.labels, svc.spec.selector) &&
        p.status?.podIP &&
        !['Succeeded', 'Failed'].includes(p.status?.phase),
    );
    pods.sort((a, b) => String(a.metadata.name).localeCompare(String(b.metadata.name)));
    const resolvePort = (sp: any, pod: any): number | undefined => {
      const tp = sp.targetPort ?? sp.port;
      if (typeof tp === 'number') return tp;
      if (/^\d+$/.test(String(tp))) return Number(tp);
      for (const c of pod?.spec?.containers ?? []) {
        const p = (c.ports ?? []).find((x: any) => x.name === tp);
        if (p) return p.containerPort;
      }
      return undefined;
    };
    const ports = (svc.spec.ports ?? [])
      .map((sp: any) => {
        const pod = pods.find((p) => resolvePort(sp, p) !== undefined);
        const port = resolvePort(sp, pod);
        return port === undefined
          ? undefined
          : {
              name: sp.name ?? '',
              port,
              protocol: sp.protocol ?? 'TCP',
              ...(sp.appProtocol ? { appProtocol: sp.appProtocol } : {}),
            };
      })
      .filter(Boolean);
    const ownerReferences = [
      { apiVersion: 'v1', kind: 'Service', name, uid: svc.metadata.uid, controller: true, blockOwnerDeletion: true },
    ];
    const endpoints = pods.map((p) => {
      const terminating = !!p.metadata.deletionTimestamp;
      const ready = isPodReady(p) && !terminating;
      return {
        addresses: [p.status.podIP],
        conditions: { ready, serving: isPodReady(p), terminating },
        nodeName: p.spec.nodeName,
        targetRef: { kind: 'Pod', namespace: ns, name: p.metadata.name, uid: p.metadata.uid },
      };
    });
    const sliceName = `${name}-${createHash('sha256').update(svc.metadata.uid).digest('hex').slice(0, 5)}`;
    await this.put(`/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices`, sliceName, {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: {
        name: sliceName,
        namespace: ns,
        labels: { 'kubernetes.io/service-name': name, 'endpointslice.kubernetes.io/managed-by': MANAGED_BY },
        ownerReferences,
      },
      addressType: 'IPv4',
      endpoints,
      ports,
    });
    const addr = (p: any) => ({
      ip: p.status.podIP,
      nodeName: p.spec.nodeName,
      targetRef: { kind: 'Pod', namespace: ns, name: p.metadata.name, uid: p.metadata.uid },
    });
    const ready = pods.filter((p) => isPodReady(p) && !p.metadata.deletionTimestamp).map(addr);
    const notReady = pods.filter((p) => !(isPodReady(p) && !p.metadata.deletionTimestamp)).map(addr);
    const subsets =
      pods.length && ports.length
        ? [
            {
              ...(ready.length ? { addresses: ready } : {}),
              ...(notReady.length ? { notReadyAddresses: notReady } : {}),
              ports: ports.map((p: any) => ({ name: p.name || undefined, port: p.port, protocol: p.protocol })),
            },
          ]
        : [];
    await this.put(`/api/v1/namespaces/${ns}/endpoints`, name, {
      apiVersion: 'v1',
      kind: 'Endpoints',
      metadata: { name, namespace: ns, labels: { ...(svc.metadata.labels ?? {}) }, ownerReferences },
      subsets,
    });
  }

  /** Creates or replaces when the content differs. */
  private async put(collection: string, name: string, obj: any): Promise<void> {
    let cur: any;
    try {
      cur = await this.client.request('GET', `${collection}/${name}`);
    } catch (err) {
      if (!(err instanceof KubeError && err.code === 404)) throw err;
    }
    if (!cur) {
      await this.client.request('POST', collection, obj);
      return;
    }
    const body = (o: any) =>
      canonicalJson({ ...o, metadata: { labels: o.metadata?.labels ?? {} }, apiVersion: 0, kind: 0 });
    if (body(cur) === body(obj)) return;
    await this.client.request('PUT', `${collection}/${name}`, {
      ...obj,
      metadata: { ...obj.metadata, resourceVersion: cur.metadata.resourceVersion },
    });
  }
}
