// TrafficPolicy: validation and normalization of one policy (its targets, and per field the settings the IR carries,
// FIELD_SETTINGS), and the index keys the pipeline finds policies by. Which policies reach a route and which one wins
// each field is attach-policies.ts.
import { compileRe2, re2Error } from '../../shared/regex.ts';
import {
  GATEWAY_GROUP,
  POLICY_FIELDS,
  type PolicyField,
  type TrafficPolicy,
  type TrafficPolicySpec,
} from '../model.ts';
import type { RouteWorld } from './backend-refs.ts';
import { toProtoDuration } from './duration.ts';
import type { ExtensionInfo } from './extensions.ts';
import {
  type FieldReader,
  fieldReader,
  type PolicyIdentity,
  policyIdentity,
  validationOutcome,
} from './field-reader.ts';
import { corsSettings, headerOps } from './http-settings.ts';
import { bufferSettings, compressionSettings } from './policy-body.ts';
import { type ExtensionRefs, resolvePolicyExtension } from './policy-extension.ts';
import { jwtSettings } from './policy-jwt.ts';
import type { MergeType } from './policy-merge.ts';
import { rateLimitMergeSettings, rateLimitSettings } from './policy-ratelimit.ts';
import { rbacSettings } from './policy-rbac.ts';
import { transformationSettings } from './policy-transformation.ts';
import type { Finding, Outcome, PolicySettings, ValidationMode } from './types.ts';

export interface PolicyInfo extends PolicyIdentity {
  targetRefs: { kind: 'Gateway' | 'HTTPRoute'; name: string; sectionName?: string }[];
  selectors: { kind: 'Gateway' | 'HTTPRoute'; matchLabels: Record<string, string> }[];
  /** Fields the spec sets. */
  fields: PolicyField[];
  /** Fields that can be applied, normalized. */
  settings: PolicySettings;
  /** The same fields as the spec writes them: what a merge (`mergeType`, policy-merge.ts) merges, then normalizes. */
  spec: Partial<Record<PolicyField, unknown>>;
  /** How its fields merge onto those of the policies below it in precedence (absent: they replace them). */
  mergeType?: MergeType;
  accepted: Outcome;
  /**
   * Set when the policy names GatewayExtensions (extAuth, rateLimit.global, extProc): whether they (and their backends)
   * resolved — the first that did not, else the last that did (the policy's ResolvedRefs).
   */
  extensionRefs?: ExtensionRefs;
  findings: Finding[];
}

/** GatewayExtensions, and Services and ReferenceGrants (a jwt provider's remote JWKS Service) where known. */
export interface PolicyWorld extends Partial<RouteWorld> {
  extension(namespace: string, name: string): ExtensionInfo | undefined;
}

/** Index keys for policy lookup: `<Kind>/<ns>/<name>` per targetRef, `selector/<Kind>/<ns>` per selector. */
export function policyTargetKeys(p: TrafficPolicy): string[] {
  const ns = p.metadata.namespace ?? 'default';
  const keys = new Set<string>();
  for (const t of p.spec?.targetRefs ?? []) keys.add(`${t.kind}/${ns}/${t.name}`);
  for (const s of p.spec?.targetSelectors ?? []) keys.add(`selector/${s.kind}/${ns}`);
  return [...keys];
}

const perMillion = (pct: number | undefined) => Math.round((pct ?? 100) * 10_000);

type SettingsOf<F extends keyof PolicySettings & keyof TrafficPolicySpec> = (
  spec: NonNullable<TrafficPolicySpec[F]>,
  r: FieldReader,
) => PolicySettings[F] | undefined;

/**
 * Per TrafficPolicy field (but extAuth and jwt, which need the world), its settings as the IR carries
 * them; undefined when it has nothing to apply. Checked in this order, which is the order of the problems in
 * Accepted's message.
 */
const FIELD_SETTINGS: { [F in Exclude<PolicyField, 'extAuth' | 'extProc' | 'jwt'>]: SettingsOf<F> } = {
  timeouts: (t, r) => {
    const request = r.duration('spec.timeouts.request', t.request);
    const streamIdle = r.duration('spec.timeouts.streamIdle', t.streamIdle);
    return { ...(request ? { request } : {}), ...(streamIdle ? { streamIdle } : {}) };
  },
  retry: (rt, r) => {
    const statusCodes = rt.statusCodes ?? [];
    const retryOn = [...(rt.retryOn?.length ? rt.retryOn : ['5xx', 'reset', 'connect-failure'])];
    if (statusCodes.length && !retryOn.includes('retriable-status-codes')) retryOn.push('retriable-status-codes');
    const perTryTimeout = r.duration('spec.retry.perTryTimeout', rt.perTryTimeout);
    const backoffBaseInterval = r.duration('spec.retry.backoffBaseInterval', rt.backoffBaseInterval);
    return {
      attempts: rt.attempts,
      retryOn,
      statusCodes,
      ...(perTryTimeout ? { perTryTimeout } : {}),
      ...(backoffBaseInterval ? { backoffBaseInterval } : {}),
    };
  },
  cors: (c, r) => corsSettings(c, 'spec.cors', (field, message) => r.problem(field, message)),
  headerModifiers: (h) => {
    const request = headerOps(h.request);
    const response = headerOps(h.response);
    return { ...(request ? { request } : {}), ...(response ? { response } : {}) };
  },
  urlRewrite: (u, r) => {
    if (u.pathRegex) {
      const err = re2Error(u.pathRegex.pattern);
      if (err) {
        r.problem(
          'spec.urlRewrite.pathRegex.pattern',
          `invalid RE2 regex ${JSON.stringify(u.pathRegex.pattern)}: ${err}`,
        );
      } else {
        const subErr = compileRe2(u.pathRegex.pattern).rewriteError(u.pathRegex.substitution);
        if (subErr) r.problem('spec.urlRewrite.pathRegex.substitution', subErr);
      }
    }
    return {
      ...(u.hostname ? { hostname: u.hostname } : {}),
      ...(u.pathRegex ? { pathRegex: { pattern: u.pathRegex.pattern, substitution: u.pathRegex.substitution } } : {}),
    };
  },
  faultInjection: (f, r) => {
    const fixedDelay = f.delay ? r.duration('spec.faultInjection.delay.fixedDelay', f.delay.fixedDelay) : undefined;
    return {
      ...(f.delay && fixedDelay ? { delay: { fixedDelay, perMillion: perMillion(f.delay.percentage) } } : {}),
      ...(f.abort ? { abort: { httpStatus: f.abort.httpStatus, perMillion: perMillion(f.abort.percentage) } } : {}),
    };
  },
  rbac: rbacSettings,
  buffer: bufferSettings,
  compression: compressionSettings,
  transformation: transformationSettings,
  // Read with the world in buildPolicyInfo (policy-ratelimit.ts); here only for a merge of several policies' specs.
  rateLimit: rateLimitMergeSettings,
};

/** Whether a field's settings are read from its spec alone (what a merge needs: fieldSettingsOf). */
export function readFromSpec(field: PolicyField): boolean {
  return field in FIELD_SETTINGS;
}

/**
 * One field's settings from its spec as written (a merge of several policies' specs): undefined when the field is not
 * read from its spec alone (extAuth needs the world), else the settings and the problems found.
 */
export function fieldSettingsOf(
  field: PolicyField,
  spec: unknown,
): { settings: unknown; problems: string[] } | undefined {
  const read = (FIELD_SETTINGS as Record<string, SettingsOf<any> | undefined>)[field];
  if (!read) return undefined;
  const problems: string[] = [];
  const settings = read(spec as never, {
    problem: (f, m) => problems.push(`${f}: ${m}`),
    duration: (f, v) => {
      if (v === undefined) return undefined;
      const d = toProtoDuration(v);
      if (!d) problems.push(`${f}: invalid duration ${JSON.stringify(v)}`);
      return d;
    },
  });
  return { settings, problems };
}

/** extAuth: off (`disable`), or the GatewayExtension it names when that one and its backend resolved. */
function extAuthSettings(
  e: NonNullable<TrafficPolicySpec['extAuth']>,
  ns: string,
  world: PolicyWorld,
  r: FieldReader,
): { settings?: PolicySettings['extAuth']; refs?: ExtensionRefs } {
  if (e.disable) return { settings: { disabled: true } };
  if (!e.extensionRef) {
    r.problem('spec.extAuth', 'set extensionRef (a GatewayExtension) or disable: true');
    return {};
  }
  const res = resolvePolicyExtension('extAuth', ns, e.extensionRef.name, world, (x) => x.extAuth, 'ext auth');
  return { ...(res.value ? { settings: { disabled: false, ext: res.value } } : {}), refs: res.refs };
}

/** extProc: off (`disable`), or the GatewayExtension it names when that one and its backend resolved. */
function extProcSettings(
  e: NonNullable<TrafficPolicySpec['extProc']>,
  ns: string,
  world: PolicyWorld,
  r: FieldReader,
): { settings?: PolicySettings['extProc']; refs?: ExtensionRefs } {
  if (e.disable) return { settings: { disabled: true } };
  if (!e.extensionRef) {
    r.problem('spec.extProc', 'set extensionRef (a GatewayExtension) or disable: true');
    return {};
  }
  const res = resolvePolicyExtension('extProc', ns, e.extensionRef.name, world, (x) => x.extProc, 'ext proc');
  return { ...(res.value ? { settings: { disabled: false, ext: res.value } } : {}), refs: res.refs };
}

/** The policy's ResolvedRefs: the first extension reference that did not resolve, else the last that did. */
function combineRefs(list: (ExtensionRefs | undefined)[]): ExtensionRefs | undefined {
  const all = list.filter((x): x is ExtensionRefs => x !== undefined);
  return all.find((x) => !x.ok) ?? all.at(-1);
}

const routeWorldOf = (w: PolicyWorld): RouteWorld | undefined =>
  w.service && w.referenceGrants ? { service: w.service, referenceGrants: w.referenceGrants } : undefined;

/** targetRefs and targetSelectors, each of a kind a policy can attach to (Gateway, HTTPRoute). */
function policyTargets(spec: TrafficPolicySpec, r: FieldReader): Pick<PolicyInfo, 'targetRefs' | 'selectors'> {
  const targetRefs: PolicyInfo['targetRefs'] = [];
  (spec.targetRefs ?? []).forEach((t, i) => {
    if (t.group !== GATEWAY_GROUP || (t.kind !== 'Gateway' && t.kind !== 'HTTPRoute')) {
      r.problem(
        `spec.targetRefs[${i}]`,
        `${t.group}/${t.kind} cannot be targeted (use ${GATEWAY_GROUP} Gateway or HTTPRoute)`,
      );
      return;
    }
    targetRefs.push({ kind: t.kind, name: t.name, ...(t.sectionName ? { sectionName: t.sectionName } : {}) });
  });
  const selectors: PolicyInfo['selectors'] = [];
  (spec.targetSelectors ?? []).forEach((s, i) => {
    if (s.group !== GATEWAY_GROUP || (s.kind !== 'Gateway' && s.kind !== 'HTTPRoute')) {
      r.problem(`spec.targetSelectors[${i}]`, `${s.group}/${s.kind} cannot be selected`);
      return;
    }
    selectors.push({ kind: s.kind, matchLabels: s.matchLabels ?? {} });
  });
  return { targetRefs, selectors };
}

export function buildPolicyInfo(p: TrafficPolicy, world: PolicyWorld, mode: ValidationMode): PolicyInfo {
  const id = policyIdentity('TrafficPolicy', p.metadata);
  const ns = id.ref.namespace;
  const spec = p.spec ?? {};
  const { reader, problems } = fieldReader();
  const { targetRefs, selectors } = policyTargets(spec, reader);
  const settings: PolicySettings = {};
  for (const [field, read] of Object.entries(FIELD_SETTINGS) as [keyof typeof FIELD_SETTINGS, SettingsOf<any>][]) {
    if (spec[field] === undefined || field === 'rateLimit') continue;
    const v = read(spec[field], reader);
    if (v !== undefined) (settings as Record<string, unknown>)[field] = v;
  }
  const extAuth = spec.extAuth ? extAuthSettings(spec.extAuth, ns, world, reader) : {};
  if (extAuth.settings) settings.extAuth = extAuth.settings;
  const rateLimit = spec.rateLimit ? rateLimitSettings(spec.rateLimit, ns, world, reader) : {};
  if (rateLimit.settings) settings.rateLimit = rateLimit.settings;
  const extProc = spec.extProc ? extProcSettings(spec.extProc, ns, world, reader) : {};
  if (extProc.settings) settings.extProc = extProc.settings;
  const extensionRefs = combineRefs([extAuth.refs, rateLimit.refs, extProc.refs]);
  const jwt =
    spec.jwt && jwtSettings(spec.jwt, reader, { namespace: ns, policy: p.metadata.name, world: routeWorldOf(world) });
  if (jwt) settings.jwt = jwt;

  const { settings: applied, accepted, findings } = validationOutcome(id.ref, mode, problems, settings);
  return {
    ...id,
    targetRefs,
    selectors,
    fields: POLICY_FIELDS.filter((f) => spec[f] !== undefined),
    settings: applied,
    spec: Object.fromEntries(Object.keys(applied).map((f) => [f, spec[f as PolicyField]])),
    ...(spec.mergeType ? { mergeType: spec.mergeType } : {}),
    accepted,
    ...(extensionRefs ? { extensionRefs } : {}),
    findings,
  };
}
