// Envoy's application log: one logger per component (Envoy's logger ids), levels changeable at run time through
// /logging, and spdlog's line format `[%Y-%m-%d %T.%e][%t][%l][%n] [%g:%#] %v`. Connection and stream context go
// in front of the message as `[Tags: "ConnectionId":"3","StreamId":"1436..."]`, as Envoy's tagged log macros do.
// The source location is this proxy's own file and line, taken from the call site only when a line is printed.
import { appendFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** spdlog's level names, in Envoy's order (the index is the spdlog level). */
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warning', 'error', 'critical', 'off'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Envoy's logger ids (source/common/common/logger.h), the names /logging lists and accepts. */
export const ENVOY_COMPONENTS = [
  'admin',
  'alternate_protocols_cache',
  'aws',
  'assert',
  'backtrace',
  'basic_auth',
  'cache_filter',
  'client',
  'config',
  'connection',
  'conn_handler',
  'credential_injector',
  'decompression',
  'dns',
  'dubbo',
  'envoy_bug',
  'ext_authz',
  'ext_proc',
  'rocketmq',
  'file',
  'filter',
  'forward_proxy',
  'geolocation',
  'grpc',
  'happy_eyeballs',
  'hc',
  'health_checker',
  'http',
  'http2',
  'hystrix',
  'init',
  'io',
  'jwt',
  'kafka',
  'key_value_store',
  'lua',
  'main',
  'matcher',
  'misc',
  'mongo',
  'multi_connection',
  'oauth2',
  'quic',
  'quic_stream',
  'pool',
  'rate_limit_quota',
  'rbac',
  'rds',
  'redis',
  'router',
  'runtime',
  'stats',
  'secret',
  'tap',
  'testing',
  'thrift',
  'tracing',
  'upstream',
  'udp',
  'wasm',
  'websocket',
] as const;
export type Component = (typeof ENVOY_COMPONENTS)[number];

const RANK: Record<LogLevel, number> = { trace: 0, debug: 1, info: 2, warning: 3, error: 4, critical: 5, off: 6 };

/** Accepts Envoy's names plus `warn` (and any case). Undefined when unknown. */
export function parseLogLevel(text: string): LogLevel | undefined {
  const s = text.trim().toLowerCase();
  if (s === 'warn') return 'warning';
  return (LOG_LEVELS as readonly string[]).includes(s) ? (s as LogLevel) : undefined;
}

export const DEFAULT_LOG_FORMAT = '[%Y-%m-%d %T.%e][%t][%l][%n] [%g:%#] %v';

export type Tags = Record<string, string | number>;

export interface Logger {
  readonly name: Component;
  /** True when a line at `level` would be printed: guard expensive messages with it. */
  on(level: LogLevel): boolean;
  trace(msg: string, tags?: Tags): void;
  debug(msg: string, tags?: Tags): void;
  info(msg: string, tags?: Tags): void;
  warn(msg: string, tags?: Tags): void;
  error(msg: string, tags?: Tags): void;
  critical(msg: string, tags?: Tags): void;
}

export type LogSink = (line: string) => void;

export interface LogOptions {
  level?: LogLevel;
  /** Per-component overrides, e.g. from `--component-log-level upstream:debug`. */
  components?: Partial<Record<string, LogLevel>>;
  format?: string;
  /** Where lines go; default stderr (Envoy's default), or a file with `--log-path`. */
  sink?: LogSink;
}

const PROXY_DIR = path.dirname(fileURLToPath(import.meta.url));
const REPO_DIR = path.resolve(PROXY_DIR, '..', '..');
const THIS_FILE = fileURLToPath(import.meta.url);

export class LogRegistry {
  private readonly levels = new Map<string, number>();
  private readonly loggers = new Map<string, Logger>();
  private readonly render: (level: LogLevel, name: string, where: string, msg: string) => string;
  private readonly sink: LogSink;

  constructor(opts: LogOptions = {}) {
    const base = RANK[opts.level ?? 'info'];
    for (const c of ENVOY_COMPONENTS) this.levels.set(c, base);
    for (const [c, l] of Object.entries(opts.components ?? {})) {
      if (!this.levels.has(c)) throw new Error(`unknown component log level name: ${c}`);
      this.levels.set(c, RANK[l!]);
    }
    this.render = compileFormat(opts.format ?? DEFAULT_LOG_FORMAT);
    this.sink = opts.sink ?? ((line) => process.stderr.write(line + '\n'));
  }

  static fileSink(file: string): LogSink {
    return (line) => appendFileSync(file, line + '\n');
  }

  logger(name: Component): Logger {
    let l = this.loggers.get(name);
    if (!l) {
      l = this.make(name);
      this.loggers.set(name, l);
    }
    return l;
  }

  has(name: string): boolean {
    return this.levels.has(name);
  }

  level(name: string): LogLevel | undefined {
    const r = this.levels.get(name);
    return r === undefined ? undefined : LOG_LEVELS[r];
  }

  /** Every logger and its level, sorted by name (what /logging prints). */
  snapshot(): Array<[string, LogLevel]> {
    return [...this.levels.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([n, r]) => [n, LOG_LEVELS[r]!]);
  }

  setLevel(name: string, level: LogLevel): void {
    if (!this.levels.has(name)) throw new Error('unknown logger name');
    this.levels.set(name, RANK[level]);
  }

  setAll(level: LogLevel): void {
    for (const k of this.levels.keys()) this.levels.set(k, RANK[level]);
  }

  private make(name: Component): Logger {
    const levels = this.levels;
    const emit = (level: LogLevel, msg: string, tags: Tags | undefined) => {
      if (RANK[level] < levels.get(name)!) return;
      const where = callSite();
      const body = tags ? `${formatTags(tags)} ${msg}` : msg;
      this.sink(this.render(level, name, where, body));
    };
    return {
      name,
      on: (level) => RANK[level] >= levels.get(name)!,
      trace: (m, t) => emit('trace', m, t),
      debug: (m, t) => emit('debug', m, t),
      info: (m, t) => emit('info', m, t),
      warn: (m, t) => emit('warning', m, t),
      error: (m, t) => emit('error', m, t),
      critical: (m, t) => emit('critical', m, t),
    };
  }
}

/** `[Tags: "ConnectionId":"3","StreamId":"1436"]` */
export function formatTags(tags: Tags): string {
  const parts: string[] = [];
  for (const [k, v] of Object.entries(tags)) parts.push(`"${k}":"${v}"`);
  return `[Tags: ${parts.join(',')}]`;
}

/** `file:line` of the first stack frame outside this module, relative to the repository. */
function callSite(): string {
  const holder: { stack?: string } = {};
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 5;
  Error.captureStackTrace(holder, callSite);
  Error.stackTraceLimit = limit;
  for (const line of (holder.stack ?? '').split('\n').slice(1)) {
    const m = /\(?(?:file:\/\/)?([^()\s]+):(\d+):\d+\)?$/.exec(line.trim());
    if (!m) continue;
    const file = m[1]!;
    if (file === THIS_FILE) continue;
    return `${path.relative(REPO_DIR, file)}:${m[2]}`;
  }
  return 'unknown:0';
}

function pad(n: number, width = 2): string {
  return String(n).padStart(width, '0');
}

/** Compiles an spdlog pattern (the flags Envoy documents for --log-format) into a renderer. */
export function compileFormat(format: string): (level: LogLevel, name: string, where: string, msg: string) => string {
  type Part = string | ((c: Ctx) => string);
  interface Ctx {
    now: Date;
    level: LogLevel;
    name: string;
    where: string;
    msg: string;
  }
  const parts: Part[] = [];
  let lit = '';
  const flush = () => {
    if (lit) parts.push(lit);
    lit = '';
  };
  for (let i = 0; i < format.length; i++) {
    const c = format[i]!;
    if (c !== '%' || i === format.length - 1) {
      lit += c;
      continue;
    }
    const f = format[++i]!;
    let fn: ((c: Ctx) => string) | undefined;
    switch (f) {
      case 'Y':
        fn = (x) => String(x.now.getFullYear());
        break;
      case 'm':
        fn = (x) => pad(x.now.getMonth() + 1);
        break;
      case 'd':
        fn = (x) => pad(x.now.getDate());
        break;
      case 'H':
        fn = (x) => pad(x.now.getHours());
        break;
      case 'M':
        fn = (x) => pad(x.now.getMinutes());
        break;
      case 'S':
        fn = (x) => pad(x.now.getSeconds());
        break;
      case 'T':
        fn = (x) => `${pad(x.now.getHours())}:${pad(x.now.getMinutes())}:${pad(x.now.getSeconds())}`;
        break;
      case 'e':
        fn = (x) => pad(x.now.getMilliseconds(), 3);
        break;
      case 'f':
        fn = (x) => pad(x.now.getMilliseconds() * 1000, 6);
        break;
      case 't':
      case 'P':
        fn = () => String(process.pid);
        break;
      case 'l':
        fn = (x) => x.level;
        break;
      case 'L':
        fn = (x) => x.level[0]!.toUpperCase();
        break;
      case 'n':
        fn = (x) => x.name;
        break;
      case 'g':
        fn = (x) => x.where.slice(0, x.where.lastIndexOf(':'));
        break;
      case 's':
        fn = (x) => path.basename(x.where.slice(0, x.where.lastIndexOf(':')));
        break;
      case '#':
        fn = (x) => x.where.slice(x.where.lastIndexOf(':') + 1);
        break;
      case 'v':
        fn = (x) => x.msg;
        break;
      case 'j':
        fn = (x) => JSON.stringify(x.msg).slice(1, -1);
        break;
      case '_':
        fn = (x) => x.msg.replace(/\n/g, '\\n');
        break;
      case '%':
        lit += '%';
        continue;
      default:
        lit += '%' + f;
        continue;
    }
    flush();
    parts.push(fn);
  }
  flush();
  return (level, name, where, msg) => {
    const ctx: Ctx = { now: new Date(), level, name, where, msg };
    let out = '';
    for (const p of parts) out += typeof p === 'string' ? p : p(ctx);
    return out;
  };
}
