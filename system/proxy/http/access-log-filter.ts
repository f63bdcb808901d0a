// Access log filters (envoy.config.accesslog.v3.AccessLogFilter): which finished requests an access logger writes.
// Semantics of Envoy's source/common/access_log/access_log_impl.cc: status_code_filter and duration_filter compare
// with op GE/EQ/LE against the runtime value (no runtime here: its default_value; a request with no response code
// compares 0), response_flag_filter matches any of its flags (any flag at all when the list is empty),
// not_health_check_filter, header_filter (the request headers), and_filter / or_filter. Field shapes (runtime_key
// required, known flag names, two sub-filters at least) are the protos' PGV rules, checked before this runs; the
// other filter kinds are refused with a ConfigError (a NACK).
import { ConfigError } from '../config/errors.ts';
import { compileHeaderMatcher } from '../config/matchers.ts';
import type { StreamInfo } from '../stream-info.ts';

type J = Record<string, any>;
export type AccessLogFilter = (info: StreamInfo) => boolean;

function comparison(c: J | undefined): (n: number) => boolean {
  const value = Number(c?.value?.default_value ?? 0);
  switch (c?.op ?? 'EQ') {
    case 'GE':
      return (n) => n >= value;
    case 'LE':
      return (n) => n <= value;
    default:
      return (n) => n === value;
  }
}

/** Compiles one AccessLogFilter; `where` names the field in a NACK. */
export function compileAccessLogFilter(f: J, where: string): AccessLogFilter {
  if (f.status_code_filter) {
    const cmp = comparison(f.status_code_filter.comparison);
    return (i) => cmp(i.responseCode ?? 0);
  }
  if (f.duration_filter) {
    const cmp = comparison(f.duration_filter.comparison);
    return (i) => {
      const d = i.durationMs();
      return d !== undefined && cmp(d);
    };
  }
  if (f.response_flag_filter) {
    const flags = (f.response_flag_filter.flags ?? []) as string[];
    if (flags.length === 0) return (i) => i.flags.size > 0;
    return (i) => flags.some((x) => i.flags.has(x as never));
  }
  if (f.not_health_check_filter) return (i) => !i.healthCheck;
  if (f.header_filter) {
    const m = compileHeaderMatcher(f.header_filter.header ?? {}, `${where}.header_filter.header`);
    return (i) =>
      m((name) => {
        const v = i.requestHeader(name);
        return v === undefined ? undefined : Array.isArray(v) ? v.join(',') : String(v);
      });
  }
  if (f.and_filter || f.or_filter) {
    const key = f.and_filter ? 'and_filter' : 'or_filter';
    const subs = ((f[key].filters ?? []) as J[]).map((s, n) =>
      compileAccessLogFilter(s, `${where}.${key}.filters[${n}]`),
    );
    return key === 'and_filter' ? (i) => subs.every((s) => s(i)) : (i) => subs.some((s) => s(i));
  }
  const kind = Object.keys(f)[0] ?? '<empty>';
  throw new ConfigError(
    `${where}.${kind}: this access log filter is not supported (only status_code_filter, duration_filter, response_flag_filter, not_health_check_filter, header_filter, and_filter, or_filter)`,
  );
}
