// Access log lines are written off the request path, as Envoy's AccessLogFileImpl does: a request appends its line to
// a buffer, and the buffer goes to the file (or stdout) in one write when it holds 64 KiB or when the flush interval
// (Envoy's bootstrap file_flush_interval, 1 s by default) passes; closing flushes what is left. So a busy proxy makes
// one write per 64 KiB of lines instead of one (on a pipe, synchronous) write per request.

export const FLUSH_INTERVAL_MS = 1000;
export const FLUSH_MIN_BYTES = 64 * 1024;

export class BufferedLogWriter {
  private chunks: string[] = [];
  private bytes = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly out: (chunk: string) => void;
  private readonly intervalMs: number;
  private readonly maxBytes: number;

  constructor(out: (chunk: string) => void, intervalMs = FLUSH_INTERVAL_MS, maxBytes = FLUSH_MIN_BYTES) {
    this.out = out;
    this.intervalMs = intervalMs;
    this.maxBytes = maxBytes;
  }

  write(line: string): void {
    this.chunks.push(line);
    this.bytes += line.length;
    if (this.bytes >= this.maxBytes) this.flush();
    else if (!this.timer) {
      this.timer = setTimeout(() => this.flush(), this.intervalMs);
      this.timer.unref();
    }
  }

  /** Writes what is buffered in one write. */
  flush(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.chunks.length === 0) return;
    const all = this.chunks.length === 1 ? this.chunks[0]! : this.chunks.join('');
    this.chunks = [];
    this.bytes = 0;
    this.out(all);
  }
}
