// Step-by-step progress for long operations: each step prints when it starts and how long it took, and a failed step
// says what failed and what to run next.

export interface ProgressSink {
  write(line: string): void;
}

/**
 * The message of an error and of its causes: `fetch failed` alone says nothing, `fetch failed (connect ECONNREFUSED
 * 127.0.0.1:6443)` says what is wrong.
 */
export function reasonOf(err: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = err, depth = 0; e !== undefined && e !== null && depth < 5; depth++) {
    const msg = e instanceof Error ? e.message : String(e);
    if (msg && !parts.some((p) => p.includes(msg))) parts.push(msg);
    e = e instanceof Error ? e.cause : undefined;
  }
  return parts.length > 1 ? `${parts[0]} (${parts.slice(1).join('; ')})` : (parts[0] ?? 'unknown error');
}

export class StepFailed extends Error {
  readonly step: string;
  readonly hint?: string;
  constructor(step: string, cause: unknown, hint?: string) {
    super(`step "${step}" failed: ${reasonOf(cause)}${hint ? `\n  next: ${hint}` : ''}`, { cause });
    this.step = step;
    this.hint = hint;
  }
}

export interface StepRecord {
  name: string;
  ms: number;
  ok: boolean;
}

export class Progress {
  readonly steps: StepRecord[] = [];
  private readonly started = performance.now();
  private readonly sink: ProgressSink;
  private readonly quiet: boolean;
  private readonly defaultHint?: string;

  /** `hint`: what to run next when a step that has no hint of its own fails. */
  constructor(opts: { sink?: ProgressSink; quiet?: boolean; hint?: string } = {}) {
    this.sink = opts.sink ?? { write: (l) => process.stderr.write(l + '\n') };
    this.quiet = opts.quiet ?? false;
    this.defaultHint = opts.hint;
  }

  /** Runs one step. On failure, throws StepFailed carrying the hint (what the user should run next). */
  async step<T>(name: string, fn: () => Promise<T>, opts: { hint?: string } = {}): Promise<T> {
    const t0 = performance.now();
    this.print(`• ${name} ...`);
    try {
      const v = await fn();
      const ms = performance.now() - t0;
      this.steps.push({ name, ms, ok: true });
      this.print(`✓ ${name} (${formatMs(ms)})`);
      return v;
    } catch (err) {
      const ms = performance.now() - t0;
      this.steps.push({ name, ms, ok: false });
      this.print(`✗ ${name} (${formatMs(ms)})`);
      if (err instanceof StepFailed) throw err;
      throw new StepFailed(name, err, opts.hint ?? this.defaultHint);
    }
  }

  info(line: string): void {
    this.print(`  ${line}`);
  }

  totalMs(): number {
    return performance.now() - this.started;
  }

  private print(line: string) {
    if (!this.quiet) this.sink.write(line);
  }
}

export function formatMs(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}
