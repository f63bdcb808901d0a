// TrafficPolicy `rbac` → RbacIR: each principal and permission checked (a CIDR must parse, as Envoy's CidrRange; a
// header regex must be RE2), absent lists become `any` (Envoy's Policy wants at least one of each). A problem is a
// Finding naming the field (e.g. `spec.rbac.policies[0].principals[1].remoteIp`).
import { isIP } from 'node:net';
import { re2Error } from '../../shared/regex.ts';
import type { HeaderMatchSpec, RbacSpec } from '../model-policy-fields.ts';
import type { FieldReader } from './field-reader.ts';
import type { CidrIR, HeaderMatchIR, RbacIR, RbacPermissionIR, RbacPrincipalIR } from './types.ts';

/** A CIDR as Envoy's CidrRange (`10.0.0.0/8`; a bare address is /32 or /128); undefined when it does not parse. */
export function parseCidr(text: string): CidrIR | undefined {
  const [addr, len, extra] = text.trim().split('/');
  if (extra !== undefined || !addr) return undefined;
  const family = isIP(addr);
  if (family === 0) return undefined;
  const max = family === 4 ? 32 : 128;
  if (len === undefined) return { addressPrefix: addr, prefixLen: max };
  if (!/^\d{1,3}$/.test(len) || Number(len) > max) return undefined;
  return { addressPrefix: addr, prefixLen: Number(len) };
}

/** A header match, its regex checked; undefined (and a problem) when it is not exactly one kind or is invalid. */
export function headerMatchIR(h: HeaderMatchSpec, field: string, r: FieldReader): HeaderMatchIR | undefined {
  const kinds = (['exact', 'prefix', 'regex', 'present'] as const).filter((k) => h[k] !== undefined);
  if (kinds.length !== 1) {
    r.problem(field, 'set exactly one of exact, prefix, regex, present');
    return undefined;
  }
  if (h.regex !== undefined) {
    const err = re2Error(h.regex);
    if (err) {
      r.problem(`${field}.regex`, `invalid RE2 regex ${JSON.stringify(h.regex)}: ${err}`);
      return undefined;
    }
  }
  const name = h.name.toLowerCase();
  if (h.present !== undefined) return { name, present: true };
  return { name, [kinds[0]]: h[kinds[0]] } as HeaderMatchIR;
}

function principal(p: NonNullable<RbacSpec['policies'][number]['principals']>[number], field: string, r: FieldReader) {
  const set = (['directRemoteIp', 'remoteIp', 'header'] as const).filter((k) => p[k] !== undefined);
  if (set.length !== 1) {
    r.problem(field, 'set exactly one of directRemoteIp, remoteIp, header');
    return undefined;
  }
  if (p.header) {
    const header = headerMatchIR(p.header, `${field}.header`, r);
    return header && ({ header } as RbacPrincipalIR);
  }
  const key = set[0] as 'directRemoteIp' | 'remoteIp';
  const c = parseCidr(p[key]!);
  if (!c) {
    r.problem(
      `${field}.${key}`,
      `invalid CIDR ${JSON.stringify(p[key])} (use an address/prefix length such as 10.0.0.0/8)`,
    );
    return undefined;
  }
  return { [key]: c } as RbacPrincipalIR;
}

function permission(
  p: NonNullable<RbacSpec['policies'][number]['permissions']>[number],
  field: string,
  r: FieldReader,
) {
  if ((p.any !== undefined) === (p.header !== undefined)) {
    r.problem(field, 'set exactly one of any, header');
    return undefined;
  }
  if (p.any !== undefined) return { any: true } as RbacPermissionIR;
  const header = headerMatchIR(p.header!, `${field}.header`, r);
  return header && ({ header } as RbacPermissionIR);
}

export function rbacSettings(spec: RbacSpec, r: FieldReader): RbacIR | undefined {
  let bad = false;
  const seen = new Set<string>();
  const policies = (spec.policies ?? []).map((p, i) => {
    const at = `spec.rbac.policies[${i}]`;
    if (seen.has(p.name)) r.problem(`${at}.name`, `duplicate policy name ${JSON.stringify(p.name)}`);
    seen.add(p.name);
    const principals = (p.principals ?? []).map((x, j) => principal(x, `${at}.principals[${j}]`, r));
    const permissions = (p.permissions ?? []).map((x, j) => permission(x, `${at}.permissions[${j}]`, r));
    if (principals.includes(undefined) || permissions.includes(undefined)) bad = true;
    return {
      name: p.name,
      principals: principals.length ? (principals as RbacPrincipalIR[]) : [{ any: true as const }],
      permissions: permissions.length ? (permissions as RbacPermissionIR[]) : [{ any: true as const }],
    };
  });
  if (!policies.length) {
    r.problem('spec.rbac.policies', 'at least one policy is required');
    return undefined;
  }
  if (bad) return undefined;
  return { action: spec.action === 'Deny' ? 'DENY' : 'ALLOW', policies };
}
