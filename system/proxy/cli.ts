// Envoy's command line (the options deployments pass), parsed strictly: an unknown flag or a bad value is an
// error naming it, as Envoy's TCLAP parser reports ("PARSE ERROR: Argument: ...").

import FLAGS from './envoy-flags.json' with { type: 'json' };
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

// Envoy's flags, in the order --help lists them: a data table (envoy-flags.json), one row a flag; `ignored` marks
// those accepted for compatibility (a deployment may pass them) that have no effect here.
const SPECS = FLAGS as Spec[];

export function usage(): string {
  const lines = ['USAGE:', '', '   proxy  [options]', '', 'Where:', ''];
  for (const s of SPECS) {
    const names = s.short
      ? `-${s.short} <${s.kind}>,  --${s.long} <${s.kind}>`
      : `--${s.long}${s.kind === 'bool' ? '' : ` <${s.kind}>`}`;
    lines.push(`   ${names}`, `     ${s.help}${s.ignored ? ' (accepted, no effect)' : ''}`, '');
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
