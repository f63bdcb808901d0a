// The control plane's Prometheus metrics (prom-client, in a registry of its own): translations and their duration,
// krt recomputations per collection, xDS pushes, connected proxies, ACKs and NACKs, status writes, deployer applies,
// informer restarts, plus Node's process metrics.
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

export class Metrics {
  readonly registry = new Registry();
  readonly translations: Counter<'stage'>;
  readonly translationSeconds: Histogram<'stage'>;
  readonly flushSeconds: Histogram;
  readonly xdsPushes: Counter<'type_url'>;
  readonly xdsAcks: Counter<'type_url'>;
  readonly xdsNacks: Counter<'type_url'>;
  readonly snapshotsSet: Counter;
  readonly statusWrites: Counter<'resource' | 'result'>;
  readonly deployerApplies: Counter<'kind' | 'result'>;
  readonly informerRestarts: Counter<'resource'>;
  readonly events: Counter<'reason'>;

  constructor(
    sources: {
      recomputations?: () => Record<string, number>;
      connectedProxies?: () => number;
      synced?: () => boolean;
    } = {},
  ) {
    const r = this.registry;
    collectDefaultMetrics({ register: r });
    // Gauges whose names end in _total break Prometheus' naming rules (promtool check metrics): left out.
    for (const name of [
      'nodejs_active_handles_total',
      'nodejs_active_requests_total',
      'nodejs_active_resources_total',
    ]) {
      r.removeSingleMetric(name);
    }
    this.translations = new Counter({
      name: 'gwvendor_translations_total',
      help: 'Translations run, by stage (gateway: resources to IR; xds: IR to xDS resources).',
      labelNames: ['stage'],
      registers: [r],
    });
    this.translationSeconds = new Histogram({
      name: 'gwvendor_translation_duration_seconds',
      help: 'Duration of one Gateway translation, by stage.',
      labelNames: ['stage'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1],
      registers: [r],
    });
    this.flushSeconds = new Histogram({
      name: 'gwvendor_krt_flush_duration_seconds',
      help: 'Duration of one pass of pending changes through the collections.',
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [r],
    });
    const recomputations = sources.recomputations;
    new Counter({
      name: 'gwvendor_krt_recomputations_total',
      help: 'Items recomputed per krt collection (one HTTPRoute edit recomputes one item of Gateways).',
      labelNames: ['collection'],
      registers: [r],
      collect() {
        if (!recomputations) return;
        this.reset();
        for (const [collection, n] of Object.entries(recomputations())) this.inc({ collection }, n);
      },
    });
    const connected = sources.connectedProxies;
    new Gauge({
      name: 'gwvendor_xds_connected_proxies',
      help: 'Proxies with an open ADS stream.',
      registers: [r],
      collect() {
        if (connected) this.set(connected());
      },
    });
    const synced = sources.synced;
    new Gauge({
      name: 'gwvendor_krt_synced',
      help: '1 when every collection has synced.',
      registers: [r],
      collect() {
        if (synced) this.set(synced() ? 1 : 0);
      },
    });
    this.xdsPushes = new Counter({
      name: 'gwvendor_xds_pushes_total',
      help: 'xDS responses sent, by type URL.',
      labelNames: ['type_url'],
      registers: [r],
    });
    this.xdsAcks = new Counter({
      name: 'gwvendor_xds_acks_total',
      help: 'xDS ACKs received.',
      labelNames: ['type_url'],
      registers: [r],
    });
    this.xdsNacks = new Counter({
      name: 'gwvendor_xds_nacks_total',
      help: 'xDS NACKs received (a proxy rejected a configuration).',
      labelNames: ['type_url'],
      registers: [r],
    });
    this.snapshotsSet = new Counter({
      name: 'gwvendor_xds_snapshots_total',
      help: 'New snapshot versions.',
      registers: [r],
    });
    this.statusWrites = new Counter({
      name: 'gwvendor_status_writes_total',
      help: 'Status subresource writes, by resource and result.',
      labelNames: ['resource', 'result'],
      registers: [r],
    });
    this.deployerApplies = new Counter({
      name: 'gwvendor_deployer_applies_total',
      help: 'Objects applied by the deployer, by kind and result.',
      labelNames: ['kind', 'result'],
      registers: [r],
    });
    this.informerRestarts = new Counter({
      name: 'gwvendor_informer_restarts_total',
      help: 'Informers restarted after they stopped on an error.',
      labelNames: ['resource'],
      registers: [r],
    });
    this.events = new Counter({
      name: 'gwvendor_events_total',
      help: 'Kubernetes Events emitted, by reason.',
      labelNames: ['reason'],
      registers: [r],
    });
  }

  async text(): Promise<string> {
    return this.registry.metrics();
  }
}
