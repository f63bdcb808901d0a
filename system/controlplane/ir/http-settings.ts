// HTTP settings that a route's own spec and a TrafficPolicy both express, read once: header operations, and CORS
// (Gateway API's HTTPCORSFilter, GEP-1767, has the same fields as the TrafficPolicy's `cors`). One reading, so an origin
// wildcard or a header list means the same thing whichever object carried it.
import { escapeRe2, re2Error } from '../../shared/regex.ts';
import type { CorsSpec, HeaderFilter } from '../model.ts';
import type { HeaderOpsIR, PolicySettings } from './types.ts';

/** A header filter's operations, or undefined when it has none. */
export function headerOps(f: HeaderFilter | undefined): HeaderOpsIR | undefined {
  if (!f) return undefined;
  const ops = { set: [...(f.set ?? [])], add: [...(f.add ?? [])], remove: [...(f.remove ?? [])] };
  return ops.set.length || ops.add.length || ops.remove.length ? ops : undefined;
}

/** `*` → any origin; `https://*.example.com` → a regex (the `*` spans any labels, not a `/`); anything else exact. */
function originMatcher(o: string): { exact?: string; regex?: string } {
  if (!o.includes('*')) return { exact: o };
  if (o === '*') return { regex: '.*' };
  return { regex: o.split('*').map(escapeRe2).join('[^/]*') };
}

/** A CORS spec normalized; `problem(field, message)` hears of an origin pattern RE2 refuses (`field` is the list's). */
export function corsSettings(
  c: CorsSpec,
  field: string,
  problem: (field: string, message: string) => void,
): NonNullable<PolicySettings['cors']> {
  const allowOrigins = (c.allowOrigins ?? []).map(originMatcher);
  allowOrigins.forEach((o, i) => {
    const err = o.regex ? re2Error(o.regex) : undefined;
    if (err) problem(`${field}.allowOrigins[${i}]`, err);
  });
  return {
    allowOrigins,
    allowMethods: [...(c.allowMethods ?? [])],
    allowHeaders: [...(c.allowHeaders ?? [])],
    exposeHeaders: [...(c.exposeHeaders ?? [])],
    ...(c.maxAge !== undefined ? { maxAge: c.maxAge } : {}),
    ...(c.allowCredentials !== undefined ? { allowCredentials: c.allowCredentials } : {}),
  };
}
