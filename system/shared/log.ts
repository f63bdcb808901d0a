// Structured JSON-lines logging by component, with levels that can be changed at run time per component.
// The control plane and the lab's own processes use it; the proxy prints Envoy's text format instead.

export const LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'off'] as const;
export type Level = (typeof LEVELS)[number];

const RANK: Record<Level, number> = { trace: 0, debug: 1, info: 2, warn: 3, error: 4, off: 5 };

/** Accepts the level names users type, including Envoy's `warning` and `critical`. Returns undefined when unknown. */
export function parseLevel(input: string): Level | undefined {
  const s = input.trim().toLowerCase();
  if (s === 'warning') return 'warn';
  if (s === 'critical' || s === 'fatal') return 'error';
  return (LEVELS as readonly string[]).includes(s) ? (s as Level) : undefined;
}

export type Fields = Record<string, unknown>;

export interface Logger {
  readonly component: string;
  enabled(level: Level): boolean;
  trace(msg: string, fields?: Fields): void;
  debug(msg: string, fields?: Fields): void;
  info(msg: string, fields?: Fields): void;
  warn(msg: string, fields?: Fields): void;
  error(msg: string, fields?: Fields): void;
}

export type Sink = (line: string) => void;

/** Holds one level per component; loggers read it on every call, so a level change applies at once. */
export class LogRegistry {
  private readonly levels = new Map<string, Level>();
  private readonly loggers = new Map<string, Logger>();
  private defaultLevel: Level;
  private readonly sink: Sink;

  constructor(opts: { level?: Level; sink?: Sink } = {}) {
    this.defaultLevel = opts.level ?? 'info';
    this.sink = opts.sink ?? ((line) => process.stdout.write(line + '\n'));
  }

  /** Registers a component (so /logging can list it before it logs anything) and returns its logger. */
  logger(component: string): Logger {
    let l = this.loggers.get(component);
    if (l) return l;
    if (!this.levels.has(component)) this.levels.set(component, this.defaultLevel);
    l = this.makeLogger(component);
    this.loggers.set(component, l);
    return l;
  }

  components(): string[] {
    return [...this.levels.keys()].sort();
  }

  level(component: string): Level | undefined {
    return this.levels.get(component);
  }

  levelsSnapshot(): Record<string, Level> {
    return Object.fromEntries(this.components().map((c) => [c, this.levels.get(c)!]));
  }

  /** Sets one component's level. Throws with a message naming the component when it is unknown. */
  setLevel(component: string, level: Level): void {
    if (!this.levels.has(component)) throw new Error(`unknown component: ${component}`);
    this.levels.set(component, level);
  }

  setAll(level: Level): void {
    this.defaultLevel = level;
    for (const c of this.levels.keys()) this.levels.set(c, level);
  }

  private makeLogger(component: string): Logger {
    const enabled = (level: Level) => RANK[level] >= RANK[this.levels.get(component) ?? this.defaultLevel];
    const emit = (level: Level, msg: string, fields?: Fields) => {
      if (!enabled(level)) return;
      const rec: Fields = { ts: new Date().toISOString(), level, component, msg };
      if (fields) {
        for (const [k, v] of Object.entries(fields)) {
          rec[k] = v instanceof Error ? v.message : v;
        }
      }
      this.sink(safeStringify(rec));
    };
    return {
      component,
      enabled,
      trace: (m, f) => emit('trace', m, f),
      debug: (m, f) => emit('debug', m, f),
      info: (m, f) => emit('info', m, f),
      warn: (m, f) => emit('warn', m, f),
      error: (m, f) => emit('error', m, f),
    };
  }
}

function safeStringify(rec: Fields): string {
  try {
    return JSON.stringify(rec);
  } catch {
    return JSON.stringify({ ts: rec.ts, level: rec.level, component: rec.component, msg: String(rec.msg) });
  }
}
