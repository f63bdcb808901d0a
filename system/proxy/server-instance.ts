// The proxy server as the admin interface sees it (Envoy's Server::Instance and Server::Options): the bootstrap
// and command line, the three xDS resource managers, stats and loggers, and the server state it reports and
// changes (/ready, /healthcheck/fail, /quitquitquit). server.ts implements it; admin/ reads only this, so the
// server can own its admin interface without the two importing each other.
import type { RouteManager } from './config/route-manager.ts';
import type { ListenerManager } from './listener/listener-manager.ts';
import type { LogRegistry } from './log.ts';
import type { StatsStore } from './stats.ts';
import type { ClusterManager } from './upstream/cluster-manager.ts';

type J = Record<string, any>;

export type ServerState = 'LIVE' | 'DRAINING' | 'PRE_INITIALIZING' | 'INITIALIZING';

/** Envoy's command line options, as /server_info reports them. */
export interface CommandLineOptions {
  configPath: string;
  configYaml: string;
  logLevel: string;
  componentLogLevel: string;
  logFormat: string;
  logPath: string;
  serviceCluster: string;
  serviceNode: string;
  serviceZone: string;
  drainTimeS: number;
  parentShutdownTimeS: number;
  disableHotRestart: boolean;
  concurrency: number;
  baseId: number;
  mode: 'Serve' | 'Validate' | 'InitOnly';
  restartEpoch: number;
  adminAddressPath: string;
  args: string[];
}

export interface ServerInstance {
  /** The bootstrap as canonical JSON. */
  readonly bootstrap: J;
  readonly cli: Partial<CommandLineOptions>;
  readonly logs: LogRegistry;
  readonly stats: StatsStore;
  readonly clusters: ClusterManager;
  readonly listeners: ListenerManager;
  readonly routes: RouteManager;
  /** When the server started, as a proto timestamp string (config_dump's bootstrap last_updated). */
  readonly startedAt: string;
  /** performance.now() at start, for uptimes. */
  readonly startMono: number;
  /** What /server_info reports as the version. */
  readonly version: string;
  /** What /ready and server.state report: DRAINING once health checks fail. */
  reportedState(): ServerState;
  /** /healthcheck/fail and /healthcheck/ok. */
  setHealthCheckFailed(failed: boolean): void;
  /** /quitquitquit: stops the server. */
  quit(): void;
}
