// Envoy's command line (the options deployments pass), parsed strictly: an unknown flag or a bad value is an
// error naming it, as Envoy's TCLAP parser reports ("PARSE ERROR: Argument: ...").
import { ENVOY_COMPONENTS, type LogLevel, parseLogLevel } from './log.ts';
import type { CommandLineOptions } from './server-instance.ts';

export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

export interface ParsedArgs extends CommandLineOptions {
  help: boolean;
  version: boolean;
  level: LogLevel;
  componentLevels: Record<string, LogLevel>;
}

type Kind = 'string' | 'int' | 'bool';

interface Spec {
  long: string;
  short?: string;
  kind: Kind;
  help: string;
  /** Accepted for compatibility; has no effect here. */
  ignored?: boolean;
}

const SPECS: Spec[] = [
  { long: 'config-path', short: 'c', kind: 'string', help: 'Path to configuration file' },
  {
    long: 'config-yaml',
    kind: 'string',
    help: 'YAML string for a v3 bootstrap configuration (merged over --config-path)',
  },
  {
    long: 'log-level',
    short: 'l',
    kind: 'string',
    help: 'Log levels: [trace][debug][info][warning|warn][error][critical][off]',
  },
  {
    long: 'component-log-level',
    kind: 'string',
    help: 'Comma separated list of component log levels, e.g. upstream:debug,config:trace',
  },
  { long: 'log-format', kind: 'string', help: 'Log message format in spdlog syntax' },
  { long: 'log-path', kind: 'string', help: 'Path to logfile' },
  {
    long: 'log-format-escaped',
    kind: 'bool',
    help: 'Escape c-style escape sequences in the application logs',
    ignored: true,
  },
  { long: 'service-node', kind: 'string', help: 'Node name (overrides node.id)' },
  { long: 'service-cluster', kind: 'string', help: 'Cluster name (overrides node.cluster)' },
  { long: 'service-zone', kind: 'string', help: 'Zone name (overrides node.locality.zone)' },
  {
    long: 'mode',
    kind: 'string',
    help: "One of 'serve' (default; validate configs and then serve traffic normally) or 'validate' (validate configs and exit).",
  },
  { long: 'drain-time-s', kind: 'int', help: 'Hot restart and LDS removal drain time in seconds' },
  { long: 'parent-shutdown-time-s', kind: 'int', help: 'Hot restart parent shutdown time in seconds' },
  { long: 'drain-strategy', kind: 'string', help: 'Hot restart drain sequence behaviour', ignored: true },
  { long: 'disable-hot-restart', kind: 'bool', help: 'Disable hot restart functionality' },
  { long: 'restart-epoch', kind: 'int', help: 'Hot restart epoch #' },
  { long: 'base-id', kind: 'int', help: 'Base ID so that multiple envoys can run on the same host if needed' },
  { long: 'use-dynamic-base-id', kind: 'bool', help: 'Select an unused base ID', ignored: true },
  { long: 'base-id-path', kind: 'string', help: 'Path to which the base ID is written', ignored: true },
  { long: 'concurrency', kind: 'int', help: '# of worker threads to run (this proxy runs one event loop)' },
  { long: 'admin-address-path', kind: 'string', help: 'Admin address path' },
  {
    long: 'local-address-ip-version',
    kind: 'string',
    help: "The local IP address version (e.g. 'v4' or 'v6')",
    ignored: true,
  },
  { long: 'file-flush-interval-msec', kind: 'int', help: 'Interval for log flushing in msec', ignored: true },
  {
    long: 'allow-unknown-static-fields',
    kind: 'bool',
    help: 'Allow unknown fields in static configuration',
    ignored: true,
  },
  {
    long: 'reject-unknown-dynamic-fields',
    kind: 'bool',
    help: 'Reject unknown fields in dynamic configuration',
    ignored: true,
  },
  {
    long: 'ignore-unknown-dynamic-fields',
    kind: 'bool',
    help: 'Ignore unknown fields in dynamic configuration',
    ignored: true,
  },
  { long: 'enable-mutex-tracing', kind: 'bool', help: 'Enable mutex contention tracing functionality', ignored: true },
  {
    long: 'enable-fine-grain-logging',
    kind: 'bool',
    help: 'Logger mode: enable file level log control',
    ignored: true,
  },
  { long: 'enable-core-dump', kind: 'bool', help: 'Enable core dumps', ignored: true },
  { long: 'cpuset-threads', kind: 'bool', help: 'Get the default # of worker threads from cpuset size', ignored: true },
  { long: 'disable-extensions', kind: 'string', help: 'Comma-separated list of extensions to disable', ignored: true },
  { long: 'socket-path', kind: 'string', help: 'Path to hot restart socket file', ignored: true },
  { long: 'socket-mode', kind: 'string', help: 'Socket file permission', ignored: true },
  { long: 'bootstrap-version', kind: 'int', help: 'API version to parse the bootstrap config as', ignored: true },
  {
    long: 'skip-hot-restart-on-no-parent',
    kind: 'bool',
    help: 'Skip hot restart when no parent is found',
    ignored: true,
  },
  { long: 'stats-tag', kind: 'string', help: 'Static tags for all stats', ignored: true },
  { long: 'version', kind: 'bool', help: 'Displays version information and exits.' },
  { long: 'help', short: 'h', kind: 'bool', help: 'Displays usage information and exits.' },
];

export function usage(): string {
  const lines = ['USAGE:', '', '   proxy  [options]', '', 'Where:', ''];
  for (const s of SPECS) {
    const flag = s.short
      ? `-${s.short} <${s.kind}>,  --${s.long} <${s.kind}>`
      : `--${s.long}${s.kind === 'bool' ? '' : ` <${s.kind}>`}`;
    lines.push(`   ${flag}`, `     ${s.help}${s.ignored ? ' (accepted, no effect)' : ''}`, '');
  }
  lines.push('   An Envoy-compatible proxy (gwlab).');
  return lines.join('\n') + '\n';
}

function parseError(arg: string, why: string): UsageError {
  return new UsageError(
    `PARSE ERROR: Argument: ${arg}\n             ${why}\n\nBrief USAGE: proxy [options] (run with --help for the list)`,
  );
}

export function parseArgs(argv: string[]): ParsedArgs {
  const values = new Map<string, string | boolean>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    let name: string;
    let inline: string | undefined;
    if (arg.startsWith('--')) {
      const eq = arg.indexOf('=');
      name = eq < 0 ? arg.slice(2) : arg.slice(2, eq);
      inline = eq < 0 ? undefined : arg.slice(eq + 1);
    } else if (arg.startsWith('-') && arg.length >= 2) {
      const short = arg.slice(1, 2);
      const spec = SPECS.find((s) => s.short === short);
      if (!spec) throw parseError(arg, "Couldn't find match for argument");
      name = spec.long;
      if (arg.length > 2) inline = arg.slice(2);
    } else {
      throw parseError(arg, "Couldn't find match for argument");
    }
    const spec = SPECS.find((s) => s.long === name);
    if (!spec) throw parseError(arg, "Couldn't find match for argument");
    if (spec.kind === 'bool') {
      if (inline !== undefined && inline !== 'true' && inline !== 'false')
        throw parseError(arg, 'expected no value or true/false');
      values.set(spec.long, inline === undefined ? true : inline === 'true');
      continue;
    }
    const v = inline ?? argv[++i];
    if (v === undefined) throw parseError(arg, 'Missing a value for this argument!');
    if (spec.kind === 'int' && !/^-?\d+$/.test(v))
      throw parseError(arg, `Couldn't read argument value from string '${v}'`);
    values.set(spec.long, v);
  }
  const str = (k: string, d = '') => (values.has(k) ? String(values.get(k)) : d);
  const int = (k: string, d: number) => (values.has(k) ? Number(values.get(k)) : d);
  const bool = (k: string) => values.get(k) === true;
  const levelText = str('log-level', 'info');
  const level = parseLogLevel(levelText);
  if (!level)
    throw new UsageError(
      `error: invalid log level specified '${levelText}' (use trace, debug, info, warning, warn, error, critical or off)`,
    );
  const componentLevels: Record<string, LogLevel> = {};
  const cll = str('component-log-level');
  if (cll) {
    for (const pair of cll.split(',')) {
      const [comp, lvl, extra] = pair.split(':');
      if (!comp || !lvl || extra !== undefined) {
        throw new UsageError(`error: component log level not correctly specified '${pair}' (use component:level)`);
      }
      const l = parseLogLevel(lvl);
      if (!l) throw new UsageError(`error: invalid log level specified '${lvl}' for component '${comp}'`);
      if (!(ENVOY_COMPONENTS as readonly string[]).includes(comp)) {
        throw new UsageError(`error: invalid component specified '${comp}'`);
      }
      componentLevels[comp] = l;
    }
  }
  const modeText = str('mode', 'serve');
  const mode =
    modeText === 'serve'
      ? 'Serve'
      : modeText === 'validate'
        ? 'Validate'
        : modeText === 'init_only'
          ? 'InitOnly'
          : undefined;
  if (!mode) throw new UsageError(`error: unknown mode '${modeText}' (use serve, validate or init_only)`);
  const help = bool('help');
  const version = bool('version');
  const configPath = str('config-path');
  const configYaml = str('config-yaml');
  if (!help && !version && !configPath && !configYaml) {
    throw new UsageError('error: no bootstrap given: use -c/--config-path <file> or --config-yaml <yaml>');
  }
  return {
    help,
    version,
    level,
    componentLevels,
    configPath,
    configYaml,
    logLevel: level,
    componentLogLevel: cll,
    logFormat: str('log-format', '[%Y-%m-%d %T.%e][%t][%l][%n] [%g:%#] %v'),
    logPath: str('log-path'),
    serviceCluster: str('service-cluster'),
    serviceNode: str('service-node'),
    serviceZone: str('service-zone'),
    drainTimeS: int('drain-time-s', 600),
    parentShutdownTimeS: int('parent-shutdown-time-s', 900),
    disableHotRestart: bool('disable-hot-restart'),
    concurrency: int('concurrency', 1),
    baseId: int('base-id', 0),
    mode,
    restartEpoch: int('restart-epoch', 0),
    adminAddressPath: str('admin-address-path'),
    args: argv,
  };
}
