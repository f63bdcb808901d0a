// TrafficPolicy: validation and normalization of one policy, and the index keys the pipeline finds policies by.
// Which policies reach a route and which one wins each field is attach-policies.ts.
import { compileRe2, escapeRe2, re2Error } from '../../shared/regex.ts';
import { GATEWAY_GROUP, type HeaderFilter, POLICY_FIELDS, type PolicyField, type TrafficPolicy } from '../model.ts';
import { toProtoDuration } from './duration.ts';
import type { ExtensionInfo } from './extensions.ts';
import type { Finding, HeaderOpsIR, ObjRef, Outcome, PolicySettings, ValidationMode } from './types.ts';

export interface PolicyInfo {
  ref: ObjRef;
  key: string;
  generation: number;
  creationTimestamp: string;
  targetRefs: { kind: 'Gateway' | 'HTTPRoute'; name: string; sectionName?: string }[];
  selectors: { kind: 'Gateway' | 'HTTPRoute'; matchLabels: Record<string, string> }[];
  /** Fields the spec sets. */
  fields: PolicyField[];
  /** Fields that can be applied, normalized. */
  settings: PolicySettings;
  accepted: Outcome;
  /** Set when the policy uses ext auth: whether its GatewayExtension (and that one's backend) resolved. */
  extAuthRefs?: Outcome & { extension: string };
  findings: Finding[];
}

export interface PolicyWorld {
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

function headerOps(f: HeaderFilter | undefined): HeaderOpsIR | undefined {
  if (!f) return undefined;
  return { set: [...(f.set ?? [])], add: [...(f.add ?? [])], remove: [...(f.remove ?? [])] };
}

/** `*` → any origin; `https://*.example.com` → a regex; anything else exact. */
function originMatcher(o: string): { exact?: string; regex?: string } {
  if (!o.includes('*')) return { exact: o };
  if (o === '*') return { regex: '.*' };
  return { regex: o.split('*').map(escapeRe2).join('[^/]*') };
}

const perMillion = (pct: number | undefined) => Math.round((pct ?? 100) * 10_000);

export function buildPolicyInfo(p: TrafficPolicy, world: PolicyWorld, mode: ValidationMode): PolicyInfo {
  const ns = p.metadata.namespace ?? 'default';
  const ref: ObjRef = { kind: 'TrafficPolicy', namespace: ns, name: p.metadata.name };
  const spec = p.spec ?? {};
  const problems: { field: string; message: string }[] = [];
  const settings: PolicySettings = {};
  const fields = POLICY_FIELDS.filter((f) => spec[f] !== undefined);

  const targetRefs: PolicyInfo['targetRefs'] = [];
  (spec.targetRefs ?? []).forEach((t, i) => {
    if (t.group !== GATEWAY_GROUP || (t.kind !== 'Gateway' && t.kind !== 'HTTPRoute')) {
      problems.push({
        field: `spec.targetRefs[${i}]`,
        message: `${t.group}/${t.kind} cannot be targeted (use ${GATEWAY_GROUP} Gateway or HTTPRoute)`,
      });
      return;
    }
    targetRefs.push({ kind: t.kind, name: t.name, ...(t.sectionName ? { sectionName: t.sectionName } : {}) });
  });
  const selectors: PolicyInfo['selectors'] = [];
  (spec.targetSelectors ?? []).forEach((s, i) => {
    if (s.group !== GATEWAY_GROUP || (s.kind !== 'Gateway' && s.kind !== 'HTTPRoute')) {
      problems.push({ field: `spec.targetSelectors[${i}]`, message: `${s.group}/${s.kind} cannot be selected` });
      return;
    }
    selectors.push({ kind: s.kind, matchLabels: s.matchLabels ?? {} });
  });

  const dur = (field: string, v: string | undefined): string | undefined => {
    if (v === undefined) return undefined;
    const d = toProtoDuration(v);
    if (!d) problems.push({ field, message: `invalid duration ${JSON.stringify(v)}` });
    return d;
  };

  if (spec.timeouts) {
    const request = dur('spec.timeouts.request', spec.timeouts.request);
    const streamIdle = dur('spec.timeouts.streamIdle', spec.timeouts.streamIdle);
    settings.timeouts = { ...(request ? { request } : {}), ...(streamIdle ? { streamIdle } : {}) };
  }
  if (spec.retry) {
    const r = spec.retry;
    const statusCodes = r.statusCodes ?? [];
    const retryOn = [...(r.retryOn?.length ? r.retryOn : ['5xx', 'reset', 'connect-failure'])];
    if (statusCodes.length && !retryOn.includes('retriable-status-codes')) retryOn.push('retriable-status-codes');
    const perTryTimeout = dur('spec.retry.perTryTimeout', r.perTryTimeout);
    const backoffBaseInterval = dur('spec.retry.backoffBaseInterval', r.backoffBaseInterval);
    settings.retry = {
      attempts: r.attempts,
      retryOn,
      statusCodes,
      ...(perTryTimeout ? { perTryTimeout } : {}),
      ...(backoffBaseInterval ? { backoffBaseInterval } : {}),
    };
  }
  if (spec.cors) {
    const c = spec.cors;
    const allowOrigins = (c.allowOrigins ?? []).map(originMatcher);
    allowOrigins.forEach((o, i) => {
      const err = o.regex ? re2Error(o.regex) : undefined;
      if (err) problems.push({ field: `spec.cors.allowOrigins[${i}]`, message: err });
    });
    settings.cors = {
      allowOrigins,
      allowMethods: c.allowMethods ?? [],
      allowHeaders: c.allowHeaders ?? [],
      exposeHeaders: c.exposeHeaders ?? [],
      ...(c.maxAge !== undefined ? { maxAge: c.maxAge } : {}),
      ...(c.allowCredentials !== undefined ? { allowCredentials: c.allowCredentials } : {}),
    };
  }
  if (spec.headerModifiers) {
    const request = headerOps(spec.headerModifiers.request);
    const response = headerOps(spec.headerModifiers.response);
    settings.headerModifiers = { ...(request ? { request } : {}), ...(response ? { response } : {}) };
  }
  if (spec.rateLimit) {
    const tb = spec.rateLimit.local?.tokenBucket;
    if (!tb) problems.push({ field: 'spec.rateLimit.local.tokenBucket', message: 'required' });
    else {
      const fillInterval = dur('spec.rateLimit.local.tokenBucket.fillInterval', tb.fillInterval);
      if (fillInterval) {
        settings.rateLimit = { maxTokens: tb.maxTokens, tokensPerFill: tb.tokensPerFill ?? 1, fillInterval };
      }
    }
  }
  if (spec.urlRewrite) {
    const u = spec.urlRewrite;
    if (u.pathRegex) {
      const err = re2Error(u.pathRegex.pattern);
      if (err) {
        problems.push({
          field: 'spec.urlRewrite.pathRegex.pattern',
          message: `invalid RE2 regex ${JSON.stringify(u.pathRegex.pattern)}: ${err}`,
        });
      } else {
        const subErr = compileRe2(u.pathRegex.pattern).rewriteError(u.pathRegex.substitution);
        if (subErr) problems.push({ field: 'spec.urlRewrite.pathRegex.substitution', message: subErr });
      }
    }
    settings.urlRewrite = {
      ...(u.hostname ? { hostname: u.hostname } : {}),
      ...(u.pathRegex ? { pathRegex: { pattern: u.pathRegex.pattern, substitution: u.pathRegex.substitution } } : {}),
    };
  }
  if (spec.faultInjection) {
    const f = spec.faultInjection;
    const fixedDelay = f.delay ? dur('spec.faultInjection.delay.fixedDelay', f.delay.fixedDelay) : undefined;
    settings.faultInjection = {
      ...(f.delay && fixedDelay ? { delay: { fixedDelay, perMillion: perMillion(f.delay.percentage) } } : {}),
      ...(f.abort ? { abort: { httpStatus: f.abort.httpStatus, perMillion: perMillion(f.abort.percentage) } } : {}),
    };
  }
  let extAuthRefs: PolicyInfo['extAuthRefs'];
  if (spec.extAuth) {
    if (spec.extAuth.disable) settings.extAuth = { disabled: true };
    else if (!spec.extAuth.extensionRef) {
      problems.push({ field: 'spec.extAuth', message: 'set extensionRef (a GatewayExtension) or disable: true' });
    } else {
      const name = spec.extAuth.extensionRef.name;
      const ext = world.extension(ns, name);
      const extKey = `${ns}/${name}`;
      if (!ext) {
        extAuthRefs = {
          ok: false,
          reason: 'BackendNotFound',
          message: `GatewayExtension ${extKey} not found`,
          extension: extKey,
        };
      } else if (!ext.accepted.ok) {
        extAuthRefs = {
          ok: false,
          reason: 'Invalid',
          message: `GatewayExtension ${extKey}: ${ext.accepted.message}`,
          extension: extKey,
        };
      } else if (!ext.resolvedRefs.ok || !ext.extAuth) {
        extAuthRefs = {
          ok: false,
          reason: ext.resolvedRefs.reason,
          message: `ext auth not applied: GatewayExtension ${extKey}: ${ext.resolvedRefs.message}`,
          extension: extKey,
        };
      } else {
        extAuthRefs = {
          ok: true,
          reason: 'ResolvedRefs',
          message: `GatewayExtension ${extKey} resolved`,
          extension: extKey,
        };
        settings.extAuth = { disabled: false, ext: ext.extAuth };
      }
    }
  }

  const findings = problems.map((pr) => ({ resource: ref, ...pr }));
  const invalid = problems.length > 0;
  const accepted: Outcome = invalid
    ? { ok: false, reason: 'Invalid', message: problems.map((x) => `${x.field}: ${x.message}`).join('; ') }
    : { ok: true, reason: 'Valid', message: 'the policy is valid' };
  return {
    ref,
    key: `${ns}/${p.metadata.name}`,
    generation: p.metadata.generation ?? 1,
    creationTimestamp: p.metadata.creationTimestamp ?? '',
    targetRefs,
    selectors,
    fields,
    // Strict validation applies nothing of an invalid policy; with validation off, what it says is sent as written.
    settings: invalid && mode === 'strict' ? {} : settings,
    accepted,
    ...(extAuthRefs ? { extAuthRefs } : {}),
    findings,
  };
}
