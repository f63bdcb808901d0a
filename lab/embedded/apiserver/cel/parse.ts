// CEL parsing, once per expression text. A CRD bundle repeats its rules (Gateway API's standard channel: 295 rules,
// 79 distinct texts, the same checks in every version and route kind) and parsing is most of compiling one (@bufbuild/
// cel's PEG parser: ~70 of the ~90 ms lab:up spends on the bundle's rules). The parsed tree is only read afterwards
// (type checks, cost estimates, planning), so one tree serves every rule with that text. Errors are not kept: a rule
// that fails to parse throws each time, with its message.
import { parse } from '@bufbuild/cel';

export type ParsedExpr = ReturnType<typeof parse>;

/** Distinct texts kept at most; past that the cache starts again (user CRDs can hold any number of rules). */
const MAX_ENTRIES = 4096;
const parsed = new Map<string, ParsedExpr>();

/** `parse(text)` of @bufbuild/cel, shared with every earlier parse of the same text; throws as parse does. */
export function parseCel(text: string): ParsedExpr {
  let p = parsed.get(text);
  if (!p) {
    p = parse(text);
    if (parsed.size >= MAX_ENTRIES) parsed.clear();
    parsed.set(text, p);
  }
  return p;
}
