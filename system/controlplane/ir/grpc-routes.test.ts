// GRPCRoute method matches as the paths a gRPC request (`/<service>/<method>`) must have (grpc-routes.ts, as Envoy
// Gateway's processGRPCRouteMethodExact/RegularExpression): each translated match tried against request paths with the
// proxy's own RE2 engine, and the invalid ones reported with the field to fix.
import { describe, expect, it } from 'vitest';
import { compileRe2 } from '../../shared/regex.ts';
import type { GRPCRouteMatch } from '../model.ts';
import { grpcMatch } from './grpc-routes.ts';
import type { MatchIR } from './types.ts';

/** Does a request with this `:path` meet the match's path (as Envoy's path / prefix / safe_regex)? */
function meets(m: MatchIR, path: string): boolean {
  if (m.path.type === 'Exact') return path === m.path.value;
  if (m.path.type === 'PathPrefix') return path.startsWith(m.path.value);
  return compileRe2(m.path.value).matchesFully(path);
}

function paths(match: GRPCRouteMatch): string[] {
  const problems: { field: string; message: string }[] = [];
  const m = grpcMatch(match, 'm', problems);
  expect(problems).toEqual([]);
  return ['/a.B/Echo', '/a.B/EchoTwo', '/a.BOther/Echo', '/c.D/Echo', '/a.B/Echo/x', '/A.b/Echo'].filter((p) =>
    meets(m, p),
  );
}

describe('GRPCRoute method matches → request paths', () => {
  it('Exact service and method: that one path', () => {
    expect(paths({ method: { service: 'a.B', method: 'Echo' } })).toEqual(['/a.B/Echo']);
  });
  it('Exact service only: every method of that service, not a longer service name', () => {
    expect(paths({ method: { service: 'a.B' } })).toEqual(['/a.B/Echo', '/a.B/EchoTwo', '/a.B/Echo/x']);
  });
  it('Exact method only: that method of any service, case-sensitive method', () => {
    expect(paths({ method: { method: 'Echo' } })).toEqual(['/a.B/Echo', '/a.BOther/Echo', '/c.D/Echo', '/A.b/Echo']);
  });
  it('RegularExpression service and/or method', () => {
    // The user's regexes go in as written (`.*` crosses a `/`, as in Envoy Gateway's `/%s/%s`).
    expect(paths({ method: { type: 'RegularExpression', service: 'a\\..*', method: 'Echo.*' } })).toEqual([
      '/a.B/Echo',
      '/a.B/EchoTwo',
      '/a.BOther/Echo',
      '/a.B/Echo/x',
    ]);
    expect(paths({ method: { type: 'RegularExpression', method: 'EchoT.*' } })).toEqual(['/a.B/EchoTwo']);
    expect(paths({ method: { type: 'RegularExpression', service: 'c\\.D' } })).toEqual(['/c.D/Echo']);
  });
  it('no method match: every request; headers kept, the first of equivalent names only', () => {
    const m = grpcMatch(
      {
        headers: [
          { name: 'Version', value: '1' },
          { name: 'version', value: '2' },
        ],
      },
      'm',
      [],
    );
    expect(m.path).toEqual({ type: 'PathPrefix', value: '/' });
    expect(m.headers).toEqual([{ type: 'Exact', name: 'Version', value: '1' }]);
  });
  it('invalid: neither service nor method, a regex RE2 refuses, a header regex RE2 refuses', () => {
    const problems: { field: string; message: string }[] = [];
    grpcMatch({ method: { type: 'Exact' } }, 'spec.rules[0].matches[0]', problems);
    grpcMatch({ method: { type: 'RegularExpression', service: '(?=x)' } }, 'spec.rules[1].matches[0]', problems);
    grpcMatch(
      { headers: [{ type: 'RegularExpression', name: 'x', value: '((' }] },
      'spec.rules[2].matches[0]',
      problems,
    );
    expect(problems.map((p) => p.field)).toEqual([
      'spec.rules[0].matches[0].method',
      'spec.rules[1].matches[0].method',
      'spec.rules[2].matches[0].headers[0].value',
    ]);
    expect(problems[0].message).toBe("one or both of 'service' or 'method' must be specified");
  });
});
