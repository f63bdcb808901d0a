// Timestamps and durations as CEL values: `format: date-time` and `format: duration` schema strings become CEL
// timestamps and durations, as in kube-apiserver. The values are made by @bufbuild/cel's own `timestamp()` and
// `duration()` (planned once), so they are exactly the values CEL expressions produce and compare with.
import { CelScalar, type CelValue, celEnv, isCelError, parse, plan } from '@bufbuild/cel';

const env = celEnv({ variables: { s: CelScalar.STRING } });
const ts = plan(env, parse('timestamp(s)'));
const dur = plan(env, parse('duration(s)'));

/** An RFC 3339 date-time as a timestamp; undefined when it does not parse. */
export function timestampValue(s: string): CelValue | undefined {
  const v = ts({ s });
  return isCelError(v) ? undefined : v;
}

/** A duration string (`1h30m`, `10s`, `500ms`) as a duration; undefined when it does not parse. */
export function durationValue(s: string): CelValue | undefined {
  const v = dur({ s });
  return isCelError(v) ? undefined : v;
}
