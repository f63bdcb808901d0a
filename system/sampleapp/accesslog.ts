// Access log lines are buffered and written once per event-loop turn: stdout to a pipe or file is a synchronous write
// on Linux, and one write per request would cost the benchmark baseline throughput.

export interface LineWriter {
  write(line: string): void;
  flush(): void;
}

export function batchedWriter(out: (chunk: string) => void): LineWriter {
  let pending: string[] = [];
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    if (pending.length === 0) return;
    const chunk = pending.join('\n') + '\n';
    pending = [];
    out(chunk);
  };
  return {
    write(line) {
      pending.push(line);
      if (pending.length >= 512) flush();
      else if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    },
    flush,
  };
}

let stdoutSingleton: LineWriter | undefined;

/** One shared writer to this process's stdout, flushed when the process exits. */
export function stdoutWriter(): LineWriter {
  if (!stdoutSingleton) {
    const w = batchedWriter((chunk) => process.stdout.write(chunk));
    process.once('exit', w.flush);
    stdoutSingleton = w;
  }
  return stdoutSingleton;
}
