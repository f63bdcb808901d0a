// The error every config compiler throws (its message is a NACK's reason) and readers of proto JSON values
// (durations, fractional percents) the compilers share, with the one roll of a fractional percent at request time.
/** A resource that cannot be accepted: the message is what a NACK's error_detail and the `config` warning carry. */
export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/** Duration JSON ("1.5s") → milliseconds; undefined stays undefined. */
export function durationMs(d: unknown): number | undefined {
  if (typeof d !== 'string') return undefined;
  const m = /^(-)?(\d+)(?:\.(\d{1,9}))?s$/.exec(d);
  if (!m) return undefined;
  const ms = Number(m[2]) * 1000 + (m[3] ? Number(m[3].padEnd(9, '0')) / 1e6 : 0);
  return m[1] ? -ms : ms;
}

/** A FractionalPercent ({numerator, denominator}) as a probability in [0, 1]. */
export function fraction(p: { numerator?: number; denominator?: string } | undefined, fallback = 0): number {
  if (!p) return fallback;
  const den = p.denominator === 'TEN_THOUSAND' ? 10_000 : p.denominator === 'MILLION' ? 1_000_000 : 100;
  return Math.min(1, (p.numerator ?? 0) / den);
}

/**
 * Whether this request falls within the probability `p` (a fraction()): Envoy's runtime featureEnabled on a
 * FractionalPercent, as fault injection, the local rate limit, CORS filter_enabled, mirrors and route runtime_fraction
 * decide. 1 or more always, 0 or less never.
 */
export function inFraction(p: number): boolean {
  return p >= 1 || (p > 0 && Math.random() < p);
}
