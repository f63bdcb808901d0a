// Where one collector writes: paths under the collection folder, every file recorded (so redaction and the index see
// exactly what was written), and a close() after which late writes of a timed-out collector are dropped — a file
// written after the redaction pass would escape it.
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

/** A relative path whose segments are safe file names (Kubernetes names already are; this guards the rest). */
export function safeRelPath(rel: string): string {
  return rel
    .split('/')
    .filter((s) => s !== '' && s !== '.')
    .map((s) => (s === '..' ? '__' : s.replace(/[^A-Za-z0-9._-]/g, '_')))
    .join('/');
}

export class Output {
  readonly root: string;
  readonly files: string[] = [];
  private closed = false;
  private readonly pending = new Set<Promise<void>>();

  constructor(root: string) {
    this.root = root;
  }

  write(rel: string, content: string | Uint8Array): Promise<void> {
    if (this.closed) return Promise.resolve();
    const path = safeRelPath(rel);
    const abs = join(this.root, path);
    const p = (async () => {
      await mkdir(dirname(abs), { recursive: true });
      await writeFile(abs, content);
      if (!this.files.includes(path)) this.files.push(path);
    })();
    this.pending.add(p);
    return p.finally(() => this.pending.delete(p));
  }

  /** Stops accepting writes and waits for the ones under way (they are recorded, so they get redacted). */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.allSettled([...this.pending]);
  }
}
