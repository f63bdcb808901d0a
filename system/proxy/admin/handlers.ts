// The admin endpoints other than the home page and help (admin.ts): server state (/ready, /healthcheck/*,
// /quitquitquit, /server_info, /memory, ...), configuration (/clusters, /config_dump, /listeners), stats (/stats,
// /stats/prometheus, /reset_counters) and /logging, each with Envoy's help text, parameters, formats and errors.

import { canonicalize } from '../../shared/envoy/protojson.ts';
import { compileRe2, type Re2 } from '../../shared/regex.ts';
import { LOG_LEVELS, type LogRegistry, parseLogLevel } from '../log.ts';
import type { ServerInstance } from '../server-instance.ts';
import { renderJson, renderPrometheus, renderText, type StatsQuery } from '../stats.ts';
import { certsDump } from './certs.ts';
import { clustersJson, clustersText } from './clusters.ts';
import { AdminError, configDump } from './config-dump.ts';

type J = Record<string, any>;

export interface Reply {
  status: number;
  body: string;
  type?: string;
}

export interface Handler {
  path: string;
  help: string;
  mutates: boolean;
  params?: Array<[string, string]>;
  run(q: URLSearchParams, method: string): Reply | Promise<Reply>;
}

export const TEXT = 'text/plain; charset=UTF-8';
const JSON_TYPE = 'application/json';

export function text(body: string, status = 200): Reply {
  return { status, body, type: TEXT };
}

function json(v: unknown, status = 200): Reply {
  return { status, body: JSON.stringify(v, null, 1) + '\n', type: JSON_TYPE };
}

/** Every endpoint but / and /help. */
export function adminHandlers(srv: ServerInstance): Handler[] {
  return [...serverHandlers(srv), ...configHandlers(srv), ...statsHandlers(srv), loggingHandler(srv)];
}

/** Server state and information. */
function serverHandlers(srv: ServerInstance): Handler[] {
  return [
    {
      path: '/certs',
      help: 'print certs on machine',
      mutates: false,
      run: () => json(certsDump(srv.listeners.listening())),
    },
    {
      path: '/healthcheck/fail',
      help: 'cause the server to fail health checks',
      mutates: true,
      run: () => {
        srv.setHealthCheckFailed(true);
        return text('OK\n');
      },
    },
    {
      path: '/healthcheck/ok',
      help: 'cause the server to pass health checks',
      mutates: true,
      run: () => {
        srv.setHealthCheckFailed(false);
        return text('OK\n');
      },
    },
    {
      path: '/hot_restart_version',
      help: 'print the hot restart compatibility version',
      mutates: false,
      run: () => text('disabled\n'),
    },
    {
      path: '/memory',
      help: 'print current allocation/heap usage',
      mutates: false,
      run: () => {
        const m = process.memoryUsage();
        return json({
          allocated: String(m.heapUsed),
          heap_size: String(m.heapTotal),
          pageheap_unmapped: '0',
          pageheap_free: '0',
          total_thread_cache: '0',
          total_physical_bytes: String(m.rss),
        });
      },
    },
    {
      path: '/quitquitquit',
      help: 'exit the server',
      mutates: true,
      run: () => {
        setImmediate(() => srv.quit());
        return text('OK\n');
      },
    },
    {
      path: '/ready',
      help: 'print server state, return 200 if LIVE, otherwise return 503',
      mutates: false,
      run: () => {
        const state = srv.reportedState();
        return text(`${state}\n`, state === 'LIVE' ? 200 : 503);
      },
    },
    { path: '/runtime', help: 'print runtime values', mutates: false, run: () => json({ layers: [], entries: {} }) },
    {
      path: '/server_info',
      help: 'print server version/status information',
      mutates: false,
      run: () => json(serverInfo(srv)),
    },
  ];
}

/** What the proxy runs: clusters, the config dump, listeners. */
function configHandlers(srv: ServerInstance): Handler[] {
  return [
    {
      path: '/clusters',
      help: 'upstream cluster status',
      mutates: false,
      params: [['format', 'File format to use; One of (text, json)']],
      run: (q) => (q.get('format') === 'json' ? json(clustersJson(srv)) : text(clustersText(srv))),
    },
    {
      path: '/config_dump',
      help: 'dump current Envoy configs (experimental)',
      mutates: false,
      params: [
        ['resource', 'The resource to dump'],
        [
          'mask',
          'The mask to apply. When both resource and mask are specified, the mask is applied to every element in the desired repeated field so that only a subset of fields are returned. The mask is parsed as a ProtobufWkt::FieldMask',
        ],
        [
          'name_regex',
          'Dump only the currently loaded configurations whose names match the specified regex. Can be used with both resource and mask query parameters.',
        ],
        [
          'include_eds',
          'Dump currently loaded configuration including EDS. See the response definition for more information',
        ],
      ],
      run: (q) => {
        try {
          return json(
            configDump(srv, {
              resource: q.get('resource') || undefined,
              mask: q.get('mask') || undefined,
              nameRegex: q.get('name_regex') || undefined,
              includeEds: q.has('include_eds'),
            }),
          );
        } catch (err) {
          if (err instanceof AdminError) return text(err.message, err.status);
          throw err;
        }
      },
    },
    {
      path: '/listeners',
      help: 'print listener info',
      mutates: false,
      params: [['format', 'File format to use; One of (text, json)']],
      run: (q) => {
        const ls = srv.listeners.listening();
        if (q.get('format') === 'json') {
          return json({
            listener_statuses: ls.map((l) => ({
              name: l.spec.name,
              local_address: {
                socket_address: {
                  ...(l.socket.kind === 'udp' ? { protocol: 'UDP' } : {}),
                  address: l.socket.address,
                  port_value: l.socket.port,
                },
              },
            })),
          });
        }
        return text(ls.map((l) => `${l.spec.name}::${hostPort(l.socket.address, l.socket.port)}\n`).join(''));
      },
    },
  ];
}

/** Stats in Envoy's text, JSON and Prometheus formats. */
function statsHandlers(srv: ServerInstance): Handler[] {
  const stats = srv.stats;
  return [
    {
      path: '/reset_counters',
      help: 'reset all counters to zero',
      mutates: true,
      run: () => {
        stats.resetCounters();
        return text('OK\n');
      },
    },
    {
      path: '/stats',
      help: 'print server stats',
      mutates: false,
      params: [
        ['usedonly', 'Only include stats that have been written by system since restart'],
        ['filter', 'Regular expression (Google re2) for filtering stats'],
        ['format', 'Format to use; One of (html, active-html, text, json)'],
        ['type', 'Stat types to include.; One of (All, Counters, Histograms, Gauges, TextReadouts)'],
      ],
      run: (q) => {
        const sq = statsQuery(q);
        if ('status' in sq) return sq;
        const format = q.get('format') ?? 'text';
        if (format === 'json') return json(renderJson(stats, sq));
        if (format === 'prometheus') return text(renderPrometheus(stats, sq));
        if (format !== 'text')
          return text(`usage: /stats?format=(html|active-html|text|json)\n\nInvalid format: ${format}\n`, 400);
        return text(renderText(stats, sq));
      },
    },
    {
      path: '/stats/prometheus',
      help: 'print server stats in prometheus format',
      mutates: false,
      params: [
        ['usedonly', 'Only include stats that have been written by system since restart'],
        ['text_readouts', 'Render text_readouts as new gaugues with value 0 (increases Prometheus data size)'],
        ['filter', 'Regular expression (Google re2) for filtering stats'],
      ],
      run: (q) => {
        const sq = statsQuery(q);
        if ('status' in sq) return sq;
        return { status: 200, body: renderPrometheus(stats, sq), type: 'text/plain; version=0.0.4; charset=UTF-8' };
      },
    },
  ];
}

function loggingHandler(srv: ServerInstance): Handler {
  return {
    path: '/logging',
    help: 'query/change logging levels',
    mutates: true,
    params: [
      [
        'paths',
        'Change multiple logging levels by setting to <logger_name1>:<desired_level1>,<logger_name2>:<desired_level2>.',
      ],
      ['level', `desired logging level; One of (, ${LOG_LEVELS.join(', ')})`],
    ],
    run: (q) => logging(srv.logs, q),
  };
}

/** The stats endpoints' query: filter (RE2), usedonly and type; a 400 reply for a bad one. */
function statsQuery(q: URLSearchParams): StatsQuery | Reply {
  const out: StatsQuery = {};
  const filter = q.get('filter');
  if (filter) {
    try {
      out.filter = compileRe2(filter) as Re2;
    } catch (err) {
      return text(`Invalid re2 regex: ${(err as Error).message}\n`, 400);
    }
  }
  if (q.has('usedonly')) out.usedOnly = true;
  const type = q.get('type');
  if (type) {
    if (!['All', 'Counters', 'Gauges', 'Histograms', 'TextReadouts'].includes(type)) {
      return text(`invalid &type= param: '${type}'\n`, 400);
    }
    out.type = type as StatsQuery['type'];
  }
  return out;
}

/** /logging: one level, several (paths=), or all (level=); Envoy's usage text on errors, the active loggers after. */
function logging(logs: LogRegistry, q: URLSearchParams): Reply {
  const params = new Map<string, string>();
  for (const [k, v] of q) if (!params.has(k)) params.set(k, v);
  if (params.get('level') === '') params.delete('level');
  if (params.get('paths') === '') params.delete('paths');
  let error: string | undefined;
  if (params.size > 1) error = 'invalid number of parameters';
  else if (params.has('level')) {
    const level = parseLogLevel(params.get('level')!);
    if (!level) error = 'unknown logger level';
    else logs.setAll(level);
  } else if (params.has('paths')) {
    const changes: Array<[string, ReturnType<typeof parseLogLevel>]> = [];
    for (const pair of params
      .get('paths')!
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean)) {
      const i = pair.indexOf(':');
      const name = i < 0 ? pair : pair.slice(0, i).trim();
      const lvl = i < 0 ? '' : pair.slice(i + 1).trim();
      if (!name || !lvl) {
        error = 'empty logger name or empty logger level';
        break;
      }
      const level = parseLogLevel(lvl);
      if (!level) {
        error = 'unknown logger level';
        break;
      }
      changes.push([name, level]);
    }
    if (!error && changes.some(([n]) => !logs.has(n))) error = 'unknown logger name';
    if (!error) for (const [n, l] of changes) logs.setLevel(n, l!);
  } else if (params.size === 1) {
    const [name, value] = [...params][0]!;
    const level = parseLogLevel(value);
    if (!level) error = 'unknown logger level';
    else if (!logs.has(name)) error = 'unknown logger name';
    else logs.setLevel(name, level);
  }
  let body = '';
  if (error) {
    body += `error: ${error}\n\n`;
    body += 'usage: /logging?<name>=<level> (change single level)\n';
    body += 'usage: /logging?paths=name1:level1,name2:level2,... (change multiple levels)\n';
    body += 'usage: /logging?level=<level> (change all levels)\n';
    body += `levels: ${LOG_LEVELS.map((l) => `${l} `).join('')}\n`;
  } else if (params.size > 0) {
    const admin = logs.logger('admin');
    for (const [k, v] of params) admin.info(`change log level: ${k}=${v}`);
  }
  body += 'active loggers:\n';
  for (const [name, level] of logs.snapshot()) body += `  ${name}: ${level}\n`;
  body += '\n';
  return text(body, error ? 400 : 200);
}

function serverInfo(srv: ServerInstance): J {
  const c = srv.cli;
  const uptime = `${Math.floor((performance.now() - srv.startMono) / 1000)}s`;
  const info = {
    version: srv.version,
    state: srv.reportedState(),
    hot_restart_version: 'disabled',
    command_line_options: {
      base_id: String(c.baseId ?? 0),
      concurrency: c.concurrency ?? 1,
      config_path: c.configPath ?? '',
      config_yaml: c.configYaml ?? '',
      admin_address_path: c.adminAddressPath ?? '',
      local_address_ip_version: 'v4',
      log_level: c.logLevel ?? 'info',
      component_log_level: c.componentLogLevel ?? '',
      log_format: c.logFormat ?? '[%Y-%m-%d %T.%e][%t][%l][%n] [%g:%#] %v',
      log_path: c.logPath ?? '',
      service_cluster: c.serviceCluster ?? '',
      service_node: c.serviceNode ?? '',
      service_zone: c.serviceZone ?? '',
      mode: c.mode ?? 'Serve',
      disable_hot_restart: c.disableHotRestart ?? false,
      restart_epoch: c.restartEpoch ?? 0,
      drain_time: `${c.drainTimeS ?? 600}s`,
      parent_shutdown_time: `${c.parentShutdownTimeS ?? 900}s`,
      file_flush_interval: '10s',
      drain_strategy: 'Gradual',
    },
    uptime_current_epoch: uptime,
    uptime_all_epochs: uptime,
    node: srv.bootstrap.node ?? {},
  };
  return canonicalize('envoy.admin.v3.ServerInfo', info, { emitDefaults: true });
}

function hostPort(address: string, port: number): string {
  return address.includes(':') ? `[${address}]:${port}` : `${address}:${port}`;
}
