// The `authorizer` variable of admission policies: Kubernetes' CEL authz library (k8s.io/apiserver pkg/cel/library/
// authz.go), answered by this server's RBAC (rbac.ts): `authorizer.group(g).resource(r)[.subresource(s)]
// [.namespace(n)][.name(x)].check(verb)`, `authorizer.path(p).check(verb)`, `authorizer.serviceAccount(ns, name)` (the
// same checks as that service account), `authorizer.requestResource` (the request's own resource), and on the
// decision `allowed()`, `reason()`, `errored()`, `error()`. The values are CEL maps tagged `@authz` (what
// @bufbuild/cel passes through); each method refuses maps of another tag, as a missing overload. Checks run
// synchronously inside one evaluation, so the RBAC decision function is the one `withAuthorizer` installs.
import { type CelFunc, CelScalar, celMethod, mapType } from '@bufbuild/cel';
import type { UserInfo } from '../authn.ts';
import type { Attributes } from '../rbac.ts';
import type { AdmissionRequest } from './matching.ts';

export type AuthorizeFn = (user: UserInfo, a: Attributes) => boolean;

let current: AuthorizeFn | undefined;

/** Runs `fn` (a policy evaluation) with `authorize` answering the `authorizer` checks. */
export function withAuthorizer<T>(authorize: AuthorizeFn, fn: () => T): T {
  const before = current;
  current = authorize;
  try {
    return fn();
  } finally {
    current = before;
  }
}

type Entries = Map<string, unknown>;
const M = mapType(CelScalar.STRING, CelScalar.DYN);
const TAG = '@authz';

function entries(m: unknown, tag: string | string[], method: string): Entries {
  const map = m as { get(k: string): unknown; entries(): Iterable<[unknown, unknown]> };
  const t = map.get(TAG);
  if (!(Array.isArray(tag) ? tag.includes(String(t)) : t === tag))
    throw new Error(`found no matching overload for '${method}'`);
  const out: Entries = new Map();
  for (const [k, v] of map.entries()) out.set(String(k), v);
  return out;
}

const withKey = (m: Entries, tag: string, key: string, value: unknown) => {
  m.set(TAG, tag);
  m.set(key, value);
  return m;
};

function user(m: Entries): UserInfo {
  return {
    username: String(m.get('@user') ?? ''),
    groups: String(m.get('@groups') ?? '')
      .split('\n')
      .filter(Boolean),
  };
}

function decide(m: Entries, verb: string): Entries {
  const path = m.get(TAG) === 'path';
  const a: Attributes = path
    ? { verb, path: String(m.get('path')) }
    : {
        verb,
        group: String(m.get('group') ?? ''),
        resource: String(m.get('resource') ?? ''),
        subresource: (m.get('subresource') as string) || undefined,
        namespace: (m.get('namespace') as string) || undefined,
        name: (m.get('name') as string) || undefined,
      };
  if (!current) throw new Error('authorizer is not available');
  const allowed = current(user(m), a);
  return new Map<string, unknown>([
    [TAG, 'decision'],
    ['allowed', allowed],
    ['reason', ''],
  ]);
}

const str = CelScalar.STRING;
type Impl = (this: unknown, ...args: string[]) => Entries;
const method = (name: string, args: number, impl: Impl): CelFunc =>
  celMethod(name, M, Array.from({ length: args }, () => str) as [], M, impl as never);

/** The authz library's functions (for the admission CEL environment). */
export const authzLibrary: CelFunc[] = [
  method('group', 1, function (g) {
    return withKey(entries(this, 'root', 'group'), 'group', 'group', g);
  }),
  method('path', 1, function (p) {
    return withKey(entries(this, 'root', 'path'), 'path', 'path', p);
  }),
  celMethod('serviceAccount', M, [str, str], M, function (ns, name) {
    const m = entries(this, 'root', 'serviceAccount');
    m.set('@user', `system:serviceaccount:${ns}:${name}`);
    m.set('@groups', ['system:serviceaccounts', `system:serviceaccounts:${ns}`, 'system:authenticated'].join('\n'));
    return m as never;
  }),
  method('resource', 1, function (r) {
    return withKey(entries(this, 'group', 'resource'), 'resource', 'resource', r);
  }),
  ...['subresource', 'namespace', 'name'].map((k) =>
    method(k, 1, function (v) {
      return withKey(entries(this, 'resource', k), 'resource', k, v);
    }),
  ),
  method('check', 1, function (verb) {
    return decide(entries(this, ['resource', 'path'], 'check'), verb);
  }),
  celMethod('allowed', M, [], CelScalar.BOOL, function () {
    return entries(this, 'decision', 'allowed').get('allowed') === true;
  }),
  celMethod('reason', M, [], str, function () {
    return String(entries(this, 'decision', 'reason').get('reason') ?? '');
  }),
  celMethod('errored', M, [], CelScalar.BOOL, function () {
    entries(this, 'decision', 'errored');
    return false;
  }),
  celMethod('error', M, [], str, function () {
    entries(this, 'decision', 'error');
    return '';
  }),
];

/** The `authorizer` value of a request: the requester's checks, and `requestResource`. */
export function authorizerValue(req: AdmissionRequest): Map<string, unknown> {
  const who = new Map<string, unknown>([
    ['@user', req.user?.username ?? ''],
    ['@groups', (req.user?.groups ?? []).join('\n')],
  ]);
  const requestResource = new Map<string, unknown>([
    ...who,
    [TAG, 'resource'],
    ['group', req.rt.group],
    ['resource', req.rt.plural],
    ['subresource', req.subresource ?? ''],
    ['namespace', req.namespace ?? ''],
    ['name', req.name],
  ]);
  return new Map<string, unknown>([[TAG, 'root'], ...who, ['requestResource', requestResource]]);
}
