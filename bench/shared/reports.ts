// What a benchmark says: progress lines on stderr, prefixed with the bench's name, and its result files under
// reports/bench/ (JSON for comparing runs, Markdown for reading; see reports/README.md).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { reportsDir } from './paths.ts';

/** A progress printer for `bench`: `[bench:<bench>] <line>` on stderr. */
export function progress(bench: string): (line: string) => void {
  return (line) => process.stderr.write(`[bench:${bench}] ${line}\n`);
}

/** Writes each file (name → text, as given) into reports/bench/, creating the folder; returns the folder. */
export function writeReports(files: Record<string, string>): string {
  mkdirSync(reportsDir, { recursive: true });
  for (const [name, text] of Object.entries(files)) writeFileSync(join(reportsDir, name), text);
  return reportsDir;
}

/** A report's JSON text: two-space indentation and a final newline. */
export const reportJson = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;
