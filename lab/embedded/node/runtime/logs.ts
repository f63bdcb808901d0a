// Container logs in the CRI format that kubelets write (`<RFC3339Nano> <stdout|stderr> <F|P> <text>`), one file per
// container instance: `<pods>/<uid>/logs/<container>/<restartCount>.log`. Only the current and the previous instance
// are kept, which is what `kubectl logs [--previous]` can ask for. The reader implements the pods/log options:
// timestamps, tailLines, sinceTime/sinceSeconds, limitBytes, follow. A file is rotated as the kubelet rotates it
// (containerLogMaxSize 10Mi, containerLogMaxFiles 5): past the size it moves to `<n>.log.<time>` and a new one starts,
// the oldest rotated files go, `kubectl logs` reads the current file and a follower moves on to the new one; without
// it a gateway's access log grew without bound in a lab that lives for days (and `kubectl logs` read all of it).
// Rotated files stay uncompressed (the kubelet gzips all but the newest; nothing here reads them).
import { once } from 'node:events';
import fs from 'node:fs';
import { basename, dirname, join } from 'node:path';
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
/** The kubelet's containerLogMaxSize and containerLogMaxFiles defaults. */
export const CONTAINER_LOG_MAX_BYTES = 10 * 1024 * 1024;
export const CONTAINER_LOG_MAX_FILES = 5;

export interface LogRotation {
  maxBytes?: number;
  /** Files kept per instance, the current one included. */
  maxFiles?: number;
}

/** `<n>.log.<UTC time with ms>`: sorts by time as text. */
function rotatedName(file: string): string {
  const stamp = `${file}.${new Date().toISOString().replace(/[-:]/g, '').replace('T', '-').replace('Z', '')}`;
  let name = stamp;
  for (let i = 1; fs.existsSync(name); i++) name = `${stamp}-${i}`;
  return name;
}

/** The rotated files of a log file, oldest first. */
export function rotatedLogs(file: string): string[] {
  const dir = dirname(file);
  const base = basename(file);
  try {
    return fs
      .readdirSync(dir)
      .filter((f) => f.startsWith(`${base}.`))
      .sort()
      .map((f) => join(dir, f));
  } catch {
    return [];
  }
}

/** Writes one container instance's stdout and stderr to its log file, line by line with timestamps. */
export class ContainerLogWriter {
  readonly file: string;
  /** Written synchronously, so a rotation never leaves bytes in flight to the moved file (a follower would miss them). */
  private fd?: number;
  private size = 0;
  private closed = false;
  private readonly maxBytes: number;
  private readonly maxFiles: number;
  private readonly pending: Record<LogStream, string> = { stdout: '', stderr: '' };
  private readonly timers: Partial<Record<LogStream, NodeJS.Timeout>> = {};
  private readonly open = new Set<Readable>();

  constructor(file: string, rotation: LogRotation = {}) {
    this.file = file;
    this.maxBytes = rotation.maxBytes ?? CONTAINER_LOG_MAX_BYTES;
    this.maxFiles = Math.max(1, rotation.maxFiles ?? CONTAINER_LOG_MAX_FILES);
    try {
      this.size = fs.statSync(file).size;
    } catch {
      this.size = 0;
    }
    this.fd = this.openFile();
  }

  private openFile(): number | undefined {
    try {
      return fs.openSync(this.file, 'a');
    } catch {
      return undefined; // The log is lost, not the container (as when a kubelet's disk fails).
    }
  }

  private append(text: string): void {
    if (this.closed) return;
    const bytes = Buffer.byteLength(text);
    if (this.size > 0 && this.size + bytes > this.maxBytes) this.rotate();
    this.size += bytes;
    if (this.fd === undefined) return;
    try {
      fs.writeSync(this.fd, text);
    } catch {
      // A full disk loses log lines, not the container.
    }
  }

  /** Moves the file aside and starts a new one. */
  private rotate(): void {
    try {
      fs.renameSync(this.file, rotatedName(this.file));
    } catch {
      return; // The file is gone or cannot move: keep writing to it.
    }
    if (this.fd !== undefined) fs.closeSync(this.fd);
    const rotated = rotatedLogs(this.file);
    for (const f of rotated.slice(0, Math.max(0, rotated.length - (this.maxFiles - 1)))) fs.rmSync(f, { force: true });
    this.fd = this.openFile();
    this.size = 0;
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
    if (out) this.append(out);
    clearTimeout(this.timers[stream]);
    // A prompt or progress without newline still shows up (as a partial record), as with containerd.
    if (rest) this.timers[stream] = setTimeout(() => this.flushPartial(stream), PARTIAL_FLUSH_MS).unref();
  }

  private flushPartial(stream: LogStream, tag: 'P' | 'F' = 'P'): void {
    const rest = this.pending[stream];
    if (!rest) return;
    this.pending[stream] = '';
    this.append(`${criTimestamp()} ${stream} ${tag} ${rest}\n`);
  }

  /** Waits for the streams to end, writes what is left and closes the file. */
  async close(): Promise<void> {
    await Promise.all([...this.open].map((s) => (s.destroyed ? undefined : once(s, 'close').catch(() => undefined))));
    for (const s of ['stdout', 'stderr'] as const) {
      clearTimeout(this.timers[s]);
      this.flushPartial(s, 'F');
    }
    if (this.fd !== undefined) fs.closeSync(this.fd);
    this.fd = undefined;
    this.closed = true;
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
    if (n < instance - 1 || n === instance) {
      const f = join(dir, `${n}.log`);
      for (const r of rotatedLogs(f)) fs.rmSync(r, { force: true });
      fs.rmSync(f, { force: true });
    }
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
 * The file a follower reads: kept open between reads, so what was written to it before a rotation is still read; when
 * it has no more and the path names another file (rotated), the follower moves on to that one from its start. A watch
 * on the open file wakes the follower on writes and on the rename of a rotation.
 */
class FollowedFile {
  private fd?: number;
  private ino = -1;
  private pos = 0;
  private carry = '';
  private watcher?: fs.FSWatcher;
  private readonly file: string;
  private readonly onChange: () => void;

  constructor(file: string, onChange: () => void) {
    this.file = file;
    this.onChange = onChange;
  }

  private reopen(): boolean {
    let next: number;
    try {
      next = fs.openSync(this.file, 'r');
    } catch {
      return false;
    }
    this.close();
    this.fd = next;
    this.ino = fs.fstatSync(next).ino;
    this.pos = 0;
    try {
      this.watcher = fs.watch(this.file, () => this.onChange());
    } catch {
      // Polling covers it.
    }
    return true;
  }

  private readOpen(): string {
    if (this.fd === undefined) return '';
    const size = fs.fstatSync(this.fd).size;
    if (size <= this.pos) return '';
    const buf = Buffer.alloc(size - this.pos);
    const n = fs.readSync(this.fd, buf, 0, buf.length, this.pos);
    this.pos += n;
    const text = this.carry + buf.subarray(0, n).toString();
    const last = text.lastIndexOf('\n');
    this.carry = text.slice(last + 1);
    return text.slice(0, last + 1);
  }

  private rotated(): boolean {
    try {
      return fs.statSync(this.file).ino !== this.ino;
    } catch {
      return false;
    }
  }

  /** Whole records written since the last read. */
  readNew(): string {
    if (this.fd === undefined && !this.reopen()) return '';
    const text = this.readOpen();
    if (text || !this.rotated()) return text;
    return this.reopen() ? this.readOpen() : '';
  }

  close(): void {
    this.watcher?.close();
    this.watcher = undefined;
    if (this.fd !== undefined) fs.closeSync(this.fd);
    this.fd = undefined;
  }
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
  let wake: (() => void) | undefined;
  const followed = new FollowedFile(file, () => wake?.());
  const onAbort = () => wake?.();
  signal?.addEventListener('abort', onAbort);
  try {
    const first = emit(renderRecords(selectRecords(followed.readNew(), opts), opts));
    if (first) yield first;
    if (first === undefined) return;
    const { tailLines: _t, ...rest } = opts;
    while (!signal?.aborted) {
      const finished = done();
      const text = followed.readNew();
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
    followed.close();
    signal?.removeEventListener('abort', onAbort);
  }
}
