// Container logs in the CRI format that kubelets write (`<RFC3339Nano> <stdout|stderr> <F|P> <text>`), one file per
// container instance: `<pods>/<uid>/logs/<container>/<restartCount>.log`. Only the current and the previous instance
// are kept, which is what `kubectl logs [--previous]` can ask for. The reader implements the pods/log options:
// timestamps, tailLines, sinceTime/sinceSeconds, limitBytes, follow.
import { once } from 'node:events';
import fs from 'node:fs';
import { join } from 'node:path';
import type { Readable } from 'node:stream';

export type LogStream = 'stdout' | 'stderr';

/** RFC 3339 with nanoseconds, as CRI log lines carry (the clock has milliseconds; the rest is hrtime). */
export function criTimestamp(d = new Date()): string {
  const iso = d.toISOString(); // 2024-01-01T00:00:00.123Z
  const sub = String(process.hrtime()[1] % 1_000_000).padStart(6, '0');
  return `${iso.slice(0, 23)}${sub}Z`;
}

const MAX_LINE = 16 * 1024;
const PARTIAL_FLUSH_MS = 200;

/** Writes one container instance's stdout and stderr to its log file, line by line with timestamps. */
export class ContainerLogWriter {
  readonly file: string;
  private readonly out: fs.WriteStream;
  private readonly pending: Record<LogStream, string> = { stdout: '', stderr: '' };
  private readonly timers: Partial<Record<LogStream, NodeJS.Timeout>> = {};
  private readonly open = new Set<Readable>();

  constructor(file: string) {
    this.file = file;
    this.out = fs.createWriteStream(file, { flags: 'a' });
    this.out.on('error', () => undefined);
  }

  attach(src: Readable, stream: LogStream): void {
    this.open.add(src);
    src.setEncoding('utf8');
    src.on('data', (chunk: string) => this.write(stream, chunk));
    src.on('error', () => undefined);
    src.once('close', () => this.open.delete(src));
  }

  /** Appends text as if the program had written it (used for the kubelet's own notes, e.g. start errors). */
  write(stream: LogStream, chunk: string): void {
    const text = this.pending[stream] + chunk;
    const ts = criTimestamp();
    let start = 0;
    let out = '';
    for (let nl = text.indexOf('\n', start); nl !== -1; nl = text.indexOf('\n', start)) {
      out += `${ts} ${stream} F ${text.slice(start, nl)}\n`;
      start = nl + 1;
    }
    let rest = text.slice(start);
    while (rest.length > MAX_LINE) {
      out += `${ts} ${stream} P ${rest.slice(0, MAX_LINE)}\n`;
      rest = rest.slice(MAX_LINE);
    }
    this.pending[stream] = rest;
    if (out) this.out.write(out);
    clearTimeout(this.timers[stream]);
    // A prompt or progress without newline still shows up (as a partial record), as with containerd.
    if (rest) this.timers[stream] = setTimeout(() => this.flushPartial(stream), PARTIAL_FLUSH_MS).unref();
  }

  private flushPartial(stream: LogStream, tag: 'P' | 'F' = 'P'): void {
    const rest = this.pending[stream];
    if (!rest) return;
    this.pending[stream] = '';
    this.out.write(`${criTimestamp()} ${stream} ${tag} ${rest}\n`);
  }

  /** Waits for the streams to end, writes what is left and closes the file. */
  async close(): Promise<void> {
    await Promise.all([...this.open].map((s) => (s.destroyed ? undefined : once(s, 'close').catch(() => undefined))));
    for (const s of ['stdout', 'stderr'] as const) {
      clearTimeout(this.timers[s]);
      this.flushPartial(s, 'F');
    }
    await new Promise<void>((r) => this.out.end(() => r()));
  }
}

/** The instance numbers that have a log file, ascending. */
export function logInstances(dir: string): number[] {
  try {
    return fs
      .readdirSync(dir)
      .map((f) => /^(\d+)\.log$/.exec(f))
      .filter((m): m is RegExpExecArray => !!m)
      .map((m) => Number(m[1]))
      .sort((a, b) => a - b);
  } catch {
    return [];
  }
}

/** The file for a new instance; removes all but the previous one. */
export function newInstanceLog(dir: string, instance: number): string {
  fs.mkdirSync(dir, { recursive: true });
  for (const n of logInstances(dir)) {
    if (n < instance - 1 || n === instance) fs.rmSync(join(dir, `${n}.log`), { force: true });
  }
  return join(dir, `${instance}.log`);
}

/** The current (or previous) instance's log file, if any. */
export function instanceLog(dir: string, previous = false): string | undefined {
  const all = logInstances(dir);
  const n = all[all.length - (previous ? 2 : 1)];
  return n === undefined ? undefined : join(dir, `${n}.log`);
}

export interface LogRecord {
  time: string;
  stream: LogStream;
  partial: boolean;
  text: string;
}

export function parseRecord(line: string): LogRecord | undefined {
  const a = line.indexOf(' ');
  const b = line.indexOf(' ', a + 1);
  const c = line.indexOf(' ', b + 1);
  if (a < 0 || b < 0) return undefined;
  const tag = c < 0 ? line.slice(b + 1) : line.slice(b + 1, c);
  return {
    time: line.slice(0, a),
    stream: line.slice(a + 1, b) as LogStream,
    partial: tag === 'P',
    text: c < 0 ? '' : line.slice(c + 1),
  };
}

export interface LogReadOptions {
  timestamps?: boolean;
  tailLines?: number;
  /** RFC 3339; records before it are skipped (sinceSeconds is turned into this by the caller). */
  sinceTime?: string | Date;
  limitBytes?: number;
}

function sinceMs(opts: LogReadOptions): number | undefined {
  return opts.sinceTime === undefined ? undefined : new Date(opts.sinceTime).getTime();
}

/** Renders records as `kubectl logs` prints them. */
export function renderRecords(records: LogRecord[], opts: LogReadOptions): string {
  let out = '';
  for (const r of records) out += (opts.timestamps ? `${r.time} ` : '') + r.text + (r.partial ? '' : '\n');
  return out;
}

function selectRecords(text: string, opts: LogReadOptions): LogRecord[] {
  const since = sinceMs(opts);
  let records: LogRecord[] = [];
  for (const line of text.split('\n')) {
    if (!line) continue;
    const r = parseRecord(line);
    if (!r) continue;
    if (since !== undefined && new Date(r.time).getTime() < since) continue;
    records.push(r);
  }
  if (opts.tailLines !== undefined && opts.tailLines >= 0) {
    // A line is a run of partial records closed by a full one.
    const lines: LogRecord[][] = [];
    let cur: LogRecord[] = [];
    for (const r of records) {
      cur.push(r);
      if (!r.partial) {
        lines.push(cur);
        cur = [];
      }
    }
    if (cur.length) lines.push(cur);
    records = lines.slice(Math.max(0, lines.length - opts.tailLines)).flat();
  }
  return records;
}

function limit(s: string, opts: LogReadOptions): string {
  if (opts.limitBytes === undefined) return s;
  const b = Buffer.from(s);
  return b.length <= opts.limitBytes ? s : b.subarray(0, opts.limitBytes).toString();
}

/** Reads a whole log file with the pods/log options. */
export function readLog(file: string, opts: LogReadOptions = {}): string {
  let text = '';
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return '';
  }
  return limit(renderRecords(selectRecords(text, opts), opts), opts);
}

/**
 * Follows a log file: yields what readLog would give, then every new record as it is written, until `done()` says
 * the instance has exited (and everything written is out) or `signal` aborts.
 */
export async function* followLog(
  file: string,
  opts: LogReadOptions,
  done: () => boolean,
  signal?: AbortSignal,
): AsyncGenerator<string> {
  let pos = 0;
  let carry = '';
  let sent = 0;
  const emit = (s: string): string | undefined => {
    if (opts.limitBytes === undefined) return s;
    const left = opts.limitBytes - sent;
    if (left <= 0) return undefined;
    const b = Buffer.from(s);
    const part = b.length <= left ? s : b.subarray(0, left).toString();
    sent += Buffer.byteLength(part);
    return part;
  };
  const readNew = (): string => {
    let fd: number;
    try {
      fd = fs.openSync(file, 'r');
    } catch {
      return '';
    }
    try {
      const size = fs.fstatSync(fd).size;
      if (size <= pos) return '';
      const buf = Buffer.alloc(size - pos);
      const n = fs.readSync(fd, buf, 0, buf.length, pos);
      pos += n;
      const text = carry + buf.subarray(0, n).toString();
      const last = text.lastIndexOf('\n');
      carry = text.slice(last + 1);
      return text.slice(0, last + 1);
    } finally {
      fs.closeSync(fd);
    }
  };
  const first = emit(renderRecords(selectRecords(readNew(), opts), opts));
  if (first) yield first;
  if (first === undefined) return;
  const { tailLines: _t, ...rest } = opts;
  let wake: (() => void) | undefined;
  let watcher: fs.FSWatcher | undefined;
  try {
    watcher = fs.watch(file, () => wake?.());
  } catch {
    // The file may not exist yet; polling covers it.
  }
  const onAbort = () => wake?.();
  signal?.addEventListener('abort', onAbort);
  try {
    while (!signal?.aborted) {
      const finished = done();
      const text = readNew();
      if (text) {
        const out = emit(renderRecords(selectRecords(text, rest), rest));
        if (out === undefined) return;
        if (out) yield out;
        continue;
      }
      if (finished) return;
      await new Promise<void>((r) => {
        wake = r;
        setTimeout(r, 250).unref();
      });
      wake = undefined;
    }
  } finally {
    watcher?.close();
    signal?.removeEventListener('abort', onAbort);
  }
}
