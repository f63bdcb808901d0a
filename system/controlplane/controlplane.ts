// The control plane assembled from its rooms: informers (kube/) → pipeline (krt collections, IR, xDS, statuses) →
// snapshot cache → ADS server (serve/); the status writer and Events (status/), the deployer and the admin server hang
// off the pipeline. Without a
// KubeConfig it runs offline: the caller feeds the pipeline's inputs (tests, the translate tool, benchmarks).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { KubeConfig } from '@kubernetes/client-node';
import { listenOn } from '../shared/listen.ts';
import { type Logger, LogRegistry } from '../shared/log.ts';
import { startHeapSampling } from './admin/pprof.ts';
import { type AdminServer, startAdminServer } from './admin/server.ts';
import { xdsView } from './admin/xds-view.ts';
import { Deployer, kubeApplier, type ObjectApplier } from './deployer/deployer.ts';
import type { DeployerSettings } from './deployer/objects.ts';
import type { ValidationMode } from './ir/types.ts';
import { Runtime } from './krt/collection.ts';
import { type InformerSet, startInformers } from './kube/informers.ts';
import { closeTransport, withTransport } from './kube/transport.ts';
import { keepMemoryReducerWorking } from './memory-reducer.ts';
import { Metrics } from './metrics.ts';
import { Pipeline } from './pipeline.ts';
import { SnapshotCache } from './serve/cache.ts';
import { RejectionTracker } from './serve/feedback.ts';
import { AdsServer } from './serve/server.ts';
import { EventRecorder, type EventSink } from './status/events.ts';
import { kubeStatusPatcher, type StatusPatcher, StatusWriter } from './status/writer.ts';

export const COMPONENTS = [
  'controlplane',
  'informers',
  'krt',
  'translator',
  'xds',
  'status',
  'deployer',
  'events',
  'admin',
] as const;

export interface ControlPlaneOptions {
  validation: ValidationMode;
  logs?: LogRegistry;
  kubeConfig?: KubeConfig;
  xdsHost?: string;
  xdsPort?: number;
  adminHost?: string;
  /** 0: any free port; undefined: 9095. */
  adminPort?: number;
  /** Plain-HTTP /healthz and /readyz for the kubelet (0.0.0.0); undefined: none. */
  healthPort?: number;
  /**
   * Plain-HTTP /metrics for Prometheus scrapes (0.0.0.0; kgateway's controller serves them on 9092): the admin
   * server's /metrics, without the rest of the admin, which stays on localhost. undefined: none.
   */
  metricsPort?: number;
  deployer?: Partial<DeployerSettings>;
  /** Overrides for tests: where statuses and proxy objects go, and events. */
  statusPatcher?: StatusPatcher;
  applier?: ObjectApplier;
  events?: EventSink;
  /** Pod identity (events' reportingInstance). */
  instance?: string;
  version?: string;
}

export class ControlPlane {
  readonly logs: LogRegistry;
  readonly log: Logger;
  readonly pipeline: Pipeline;
  readonly cache = new SnapshotCache();
  readonly metrics: Metrics;
  readonly ads: AdsServer;
  readonly rejections: RejectionTracker;
  readonly deployer?: Deployer;
  readonly statusWriter?: StatusWriter;
  admin?: AdminServer;
  private informers?: InformerSet;
  private health?: http.Server;
  healthPort = 0;
  private metricsServer?: http.Server;
  metricsPort = 0;
  private readonly opts: ControlPlaneOptions;
  private readonly events?: EventSink;
  private startedSync = false;
  private releaseMemoryReducer?: () => void;

  constructor(opts: ControlPlaneOptions) {
    this.opts = opts;
    // Informers, status writes, Events and the deployer over kept-alive connections (kube/transport.ts); before
    // the clients below are made from it, so that they take its HTTP layer.
    if (opts.kubeConfig) withTransport(opts.kubeConfig);
    this.logs = opts.logs ?? new LogRegistry();
    for (const c of COMPONENTS) this.logs.logger(c);
    this.log = this.logs.logger('controlplane');
    const krtLog = this.logs.logger('krt');
    let pipeline: Pipeline | undefined;
    this.metrics = new Metrics({
      recomputations: () =>
        Object.fromEntries(
          (pipeline?.rt.all() ?? []).map((c) => [c.name, (c as unknown as { recomputations: number }).recomputations]),
        ),
      connectedProxies: () => this.ads.connected().length,
      synced: () => this.synced(),
    });
    const rt = new Runtime({
      start: false,
      onError: (collection, key, err) =>
        krtLog.error('computation failed; the item keeps its previous output', { collection, key, err: err as Error }),
      schedule: (fn) =>
        setImmediate(() => {
          const t0 = performance.now();
          const before = pipeline?.rt.flushes ?? 0;
          fn();
          const ms = performance.now() - t0;
          this.metrics.flushSeconds.observe(ms / 1000);
          if (pipeline && pipeline.rt.flushes > before)
            krtLog.debug('collections recomputed', { ms: Math.round(ms * 10) / 10 });
        }),
    });
    const translatorLog = this.logs.logger('translator');
    pipeline = new Pipeline({
      mode: opts.validation,
      runtime: rt,
      observe: (stage, seconds) => {
        this.metrics.translations.inc({ stage });
        this.metrics.translationSeconds.observe({ stage }, seconds);
        if (translatorLog.enabled('trace')) translatorLog.trace('translated', { stage, ms: seconds * 1000 });
      },
    });
    this.pipeline = pipeline;

    if (opts.events) this.events = opts.events;
    else if (opts.kubeConfig) {
      this.events = new EventRecorder(opts.kubeConfig, this.logs.logger('events'), {
        instance: opts.instance,
        metrics: this.metrics,
      });
    }

    const xdsLog = this.logs.logger('xds');
    this.rejections = new RejectionTracker(pipeline, this.cache, xdsLog, this.events);
    this.ads = new AdsServer(this.cache, xdsLog, {
      onPush: (_s, t) => this.metrics.xdsPushes.inc({ type_url: t }),
      onAck: (s, t, v) => {
        this.metrics.xdsAcks.inc({ type_url: t });
        this.rejections.onAck(s, t, v);
      },
      onNack: (s, t, v, d) => {
        this.metrics.xdsNacks.inc({ type_url: t });
        this.rejections.onNack(s, t, v, d);
      },
    });
    // Snapshots follow the pipeline's Snapshots collection.
    pipeline.snapshots.subscribe((events) => {
      for (const e of events) {
        if (e.new) {
          try {
            const before = this.cache.get(e.new.role)?.version;
            const snap = this.cache.set(e.new);
            if (snap.version !== before) {
              this.metrics.snapshotsSet.inc();
              xdsLog.info('snapshot', { role: snap.role, version: snap.version });
            }
          } catch (err) {
            xdsLog.error('inconsistent snapshot not served', { role: e.new.role, err: err as Error });
          }
        } else if (e.old) {
          this.cache.delete(e.old.role);
          this.rejections.forgetGateway(e.old.gateway);
          xdsLog.info('snapshot removed', { role: e.old.role });
        }
      }
    });

    const kc = opts.kubeConfig;
    const patcher = opts.statusPatcher ?? (kc ? kubeStatusPatcher(kc) : undefined);
    if (patcher)
      this.statusWriter = new StatusWriter(pipeline, patcher, this.logs.logger('status'), this.metrics, this.events);
    const applier = opts.applier ?? (kc ? kubeApplier(kc) : undefined);
    if (applier) {
      const settings: DeployerSettings = {
        proxyImage: opts.deployer?.proxyImage ?? 'gwlab.local/system:0.1.0',
        xdsHost: opts.deployer?.xdsHost ?? 'gwvendor.gwvendor-system.svc.cluster.local',
        xdsPort: opts.deployer?.xdsPort ?? opts.xdsPort ?? 9977,
      };
      this.deployer = new Deployer(pipeline, applier, settings, this.logs.logger('deployer'), {
        events: this.events,
        metrics: this.metrics,
      });
    }
  }

  synced(): boolean {
    return this.pipeline.rt.isRunning() && this.pipeline.rt.all().every((c) => c.synced());
  }

  async start(): Promise<void> {
    const o = this.opts;
    startHeapSampling();
    // Freed heap pages go back to the OS once idle after a burst of translation (memory-reducer.ts).
    this.releaseMemoryReducer = keepMemoryReducerWorking();
    // The informers first, and a turn of the event loop for their first requests to go out: the API server answers
    // them while this process loads the Envoy protos for the ADS server (~50 ms less to Ready at lab:up).
    if (o.kubeConfig) {
      this.informers = startInformers(
        o.kubeConfig,
        (k) => this.pipeline.inputFor(k),
        this.logs.logger('informers'),
        this.metrics,
      );
      this.pipeline.rejections.markSynced();
      this.informers.synced.then(() => this.startSync()).catch(() => {});
      await new Promise((r) => setImmediate(r));
    }
    await this.ads.listen(o.xdsPort ?? 9977, o.xdsHost ?? '0.0.0.0');
    this.admin = await startAdminServer(
      {
        logs: this.logs,
        krt: () => this.pipeline.rt.dump(),
        xds: () => xdsView(this.cache, this.ads.connected()),
        metrics: () => this.metrics.text(),
        info: () => ({
          version: o.version ?? 'dev',
          validation: o.validation,
          xds: `:${this.ads.port}`,
          synced: String(this.synced()),
        }),
        log: this.logs.logger('admin'),
      },
      { host: o.adminHost ?? '127.0.0.1', port: o.adminPort ?? 9095 },
    );
    if (o.healthPort !== undefined) await this.startHealth(o.healthPort);
    if (o.metricsPort !== undefined) await this.startMetrics(o.metricsPort);
  }

  /** Offline mode: the caller has loaded every input; translate and serve from here on. */
  startSync(): void {
    if (this.startedSync) return;
    this.startedSync = true;
    this.pipeline.markInputsSynced();
    const t0 = performance.now();
    this.pipeline.rt.start();
    this.pipeline.rt.flush();
    this.log.info('initial translation done', {
      gateways: this.pipeline.gateways.size(),
      routes: this.pipeline.httpRoutes.size(),
      snapshots: this.cache.roles().length,
      ms: Math.round(performance.now() - t0),
    });
    this.statusWriter?.start();
    this.deployer?.start();
  }

  private async startHealth(port: number): Promise<void> {
    this.health = await servePlain(port, async (path, res) => {
      if (path === '/healthz') {
        res.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n');
      } else if (path === '/readyz') {
        const ok = this.synced() && this.ads.port > 0;
        res
          .writeHead(ok ? 200 : 503, { 'content-type': 'text/plain' })
          .end(ok ? 'ready\n' : 'not ready: waiting for the informers to sync\n');
      } else {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('try /healthz or /readyz\n');
      }
    });
    this.healthPort = (this.health.address() as AddressInfo).port;
  }

  private async startMetrics(port: number): Promise<void> {
    this.metricsServer = await servePlain(port, async (path, res) => {
      if (path === '/metrics') {
        const text = await this.metrics.text();
        res.writeHead(200, { 'content-type': this.metrics.registry.contentType }).end(text);
      } else {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('try /metrics\n');
      }
    });
    this.metricsPort = (this.metricsServer.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    this.statusWriter?.stop();
    this.deployer?.stop();
    await this.informers?.stop();
    await Promise.all([
      this.ads.close(),
      this.admin?.close(),
      ...[this.health, this.metricsServer].map((srv) =>
        srv ? new Promise<void>((r) => srv.close(() => r())) : undefined,
      ),
    ]);
    this.health?.closeAllConnections();
    this.metricsServer?.closeAllConnections();
    if (this.opts.kubeConfig) await closeTransport(this.opts.kubeConfig);
    this.releaseMemoryReducer?.();
    this.log.info('stopped');
  }
}

/** A plain-HTTP server on 0.0.0.0:`port` for the kubelet's probes or Prometheus: `handle` gets the path. */
async function servePlain(
  port: number,
  handle: (path: string, res: http.ServerResponse) => Promise<void>,
): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    handle((req.url ?? '/').split('?')[0], res).catch((err) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(`${(err as Error).message}\n`);
    });
  });
  await listenOn(server, '0.0.0.0', port);
  return server;
}
