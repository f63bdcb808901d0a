// CEL parsing, once per expression text. A CRD bundle repeats its rules (Gateway API's standard channel: 295 rules,
// 79 distinct texts, the same checks in every version and route kind) and parsing is most of compiling one (@bufbuild/
// cel's PEG parser: ~70 of the ~90 ms lab:up spent on the bundle's rules). The parsed tree is only read afterwards
// (type checks, cost estimates, planning), so one tree serves every rule with that text. Errors are not kept: a rule
// that fails to parse throws each time, with its message.
// The trees are also kept on disk beside Node's compile cache (system/shared/compile-cache-file.ts, as the Envoy protos
// are): a new lab process reads the ~90 trees of the CRDs it installs (v8 serialization: protobuf-es messages are
// plain objects) instead of parsing them again (~60 ms of its CPU while lab:up waits on it). The file's name carries
// the parser's file and its mtime and size, so a reinstalled @bufbuild/cel (or its rebuilt bundle) never reads another
// version's trees; without a compile cache, or on any read or write error, texts are simply parsed.
import { readFileSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { deserialize, serialize } from 'node:v8';
import { parse } from '@bufbuild/cel';
import { compileCacheFile } from '../../../../system/shared/compile-cache-file.ts';
import { writeFileWhole } from '../../../../system/shared/write-whole.ts';

export type ParsedExpr = ReturnType<typeof parse>;

/** Distinct texts kept at most; past that the cache starts again (user CRDs can hold any number of rules). */
const MAX_ENTRIES = 4096;
/** Bumped when what the file holds changes shape. */
const FORMAT = 1;

let parsed: Map<string, ParsedExpr> | undefined;
let file: string | undefined;
let saveTimer: NodeJS.Timeout | undefined;

/** The disk cache's path for the installed parser, or undefined (no compile cache). */
function cacheFile(): string | undefined {
  const impl = fileURLToPath(import.meta.resolve('@bufbuild/cel'));
  const st = statSync(impl);
  return compileCacheFile('cel-parsed', 'bin', [FORMAT, impl, st.mtimeMs, st.size]);
}

function cache(): Map<string, ParsedExpr> {
  if (parsed) return parsed;
  parsed = new Map();
  try {
    file = cacheFile();
    if (file) parsed = new Map(deserialize(readFileSync(file)) as [string, ParsedExpr][]);
  } catch {} // none yet, or unreadable: parse
  return parsed;
}

function save(): void {
  clearTimeout(saveTimer);
  saveTimer = undefined;
  process.off('exit', save);
  try {
    if (file && parsed) writeFileWhole(file, serialize([...parsed]));
  } catch {} // best effort: the next process parses again
}

/** `parse(text)` of @bufbuild/cel, shared with every earlier parse of the same text; throws as parse does. */
export function parseCel(text: string): ParsedExpr {
  const c = cache();
  let p = c.get(text);
  if (!p) {
    p = parse(text);
    if (c.size >= MAX_ENTRIES) c.clear();
    c.set(text, p);
    if (file && !saveTimer) {
      // Once the texts of a batch (a CRD, a bundle) are in; at exit if the process ends first.
      saveTimer = setTimeout(save, 200);
      saveTimer.unref();
      process.on('exit', save);
    }
  }
  return p;
}
