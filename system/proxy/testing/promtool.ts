// Runs `promtool check metrics` (Debian package prometheus, installed by .ci/run) on an exposition. Envoy's own
// output has no # HELP lines and Envoy's metric names (counters without _total, gauges like membership_total,
// units such as _ms), which promtool reports as naming lint; those are Envoy's format and are returned separately.
// Anything else (a parse error, a duplicate or misplaced TYPE line, a bad label) is a real problem.
import { spawnSync } from 'node:child_process';

export interface PromtoolResult {
  /** Problems other than Envoy's accepted style (no help text, counters without _total). */
  problems: string[];
  /** The style lint lines promtool printed for Envoy's naming. */
  style: string[];
}

const ENVOY_STYLE = [
  / no help text$/,
  / counter metrics should have "_total" suffix$/,
  / non-counter metrics should not have "_total" suffix$/,
  / metric names should not contain abbreviated units$/,
  / use base unit "[^"]+" instead of "[^"]+"$/,
];

export function promtoolCheck(text: string): PromtoolResult {
  const r = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
  if (r.error) throw new Error(`promtool not runnable (install Debian package prometheus): ${r.error.message}`);
  const lines = `${r.stdout}\n${r.stderr}`
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  const style = lines.filter((l) => ENVOY_STYLE.some((re) => re.test(l)));
  const problems = lines.filter((l) => !style.includes(l));
  if (r.status !== 0 && problems.length === 0 && style.length === 0) problems.push(`promtool exited ${r.status}`);
  return { problems, style };
}
