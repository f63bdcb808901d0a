// ListenerPolicy: one policy validated into the connection manager settings the IR carries (HcmSettingsIR), and which
// policy applies to which port of a Gateway. An Envoy listener (one per port) has one connection manager, so one
// policy applies per port: among the policies naming the Gateway, one whose sectionName names a listener on that port
// beats one naming the whole Gateway, then the older one (creationTimestamp), then namespace/name — TrafficPolicy's
// order (interfaces page, "Policies"), applied to the whole policy as kgateway's HTTPListenerPolicy does. The others
// read Attached=False/Overridden naming the winner. With no policy giving an access log, the GatewayParameters'
// defaultAccessLog adds a stdout one. Formats are checked with the parser the proxy's formatter uses
// (system/shared/envoy/substitution-format.ts: one rule in one place), so an unknown %OPERATOR% is refused here with
// the message the proxy's NACK would carry.
import { FormatError, parseFormat, parseJsonFormat } from '../../shared/envoy/substitution-format.ts';
import { GATEWAY_GROUP, type ListenerPolicy, type ListenerPolicySpec } from '../model.ts';
import { fieldReader, type PolicyIdentity, policyIdentity, validationOutcome } from './field-reader.ts';
import type { PolicyAncestorReport } from './policy-reports.ts';
import {
  type AccessLogIR,
  bad,
  compareStrings,
  type Finding,
  type HcmSettingsIR,
  type ListenerIR,
  type ObjRef,
  type Outcome,
  ok,
  type ValidationMode,
} from './types.ts';

export interface ListenerPolicyInfo extends PolicyIdentity {
  targetRefs: { kind: 'Gateway'; name: string; sectionName?: string }[];
  /** ListenerPolicies have no selectors (kept for the shared status builder). */
  selectors: never[];
  /** What it sets (empty when strict validation refused it). */
  settings: Omit<HcmSettingsIR, 'provenance'>;
  accepted: Outcome;
  findings: Finding[];
}

const TRANSFORMATION = {
  Overwrite: 'OVERWRITE',
  AppendIfAbsent: 'APPEND_IF_ABSENT',
  PassThrough: 'PASS_THROUGH',
} as const;

/** Index keys: `Gateway/<ns>/<name>` per targetRef. */
export function listenerPolicyTargetKeys(p: ListenerPolicy): string[] {
  const ns = p.metadata.namespace ?? 'default';
  return [...new Set((p.spec?.targetRefs ?? []).map((t) => `${t.kind}/${ns}/${t.name}`))];
}

function formatProblem(f: () => unknown): string | undefined {
  try {
    f();
    return undefined;
  } catch (err) {
    if (err instanceof FormatError) return err.message;
    throw err;
  }
}

function accessLogs(list: NonNullable<ListenerPolicySpec['accessLog']>, problem: (f: string, m: string) => void) {
  return list.map((a, i): AccessLogIR => {
    const at = `spec.accessLog[${i}]`;
    const sink = a.fileSink ?? { path: '' };
    if (!sink.path) problem(`${at}.fileSink.path`, 'required');
    if (sink.stringFormat !== undefined && sink.jsonFormat !== undefined) {
      problem(`${at}.fileSink`, 'set at most one of stringFormat and jsonFormat');
    }
    if (sink.stringFormat !== undefined) {
      const m = formatProblem(() => parseFormat(sink.stringFormat!));
      if (m) problem(`${at}.fileSink.stringFormat`, m);
    }
    if (sink.jsonFormat !== undefined) {
      const m = formatProblem(() => parseJsonFormat(sink.jsonFormat!));
      if (m) problem(`${at}.fileSink.jsonFormat`, m);
    }
    const f = a.filter;
    return {
      path: sink.path,
      ...(sink.stringFormat !== undefined ? { text: sink.stringFormat } : {}),
      ...(sink.jsonFormat !== undefined ? { json: sink.jsonFormat } : {}),
      ...(f?.statusCode ? { statusCode: { op: f.statusCode.op, value: f.statusCode.value } } : {}),
      ...(f?.responseFlags?.length ? { responseFlags: [...f.responseFlags] } : {}),
    };
  });
}

export function buildListenerPolicyInfo(p: ListenerPolicy, mode: ValidationMode): ListenerPolicyInfo {
  const id = policyIdentity('ListenerPolicy', p.metadata);
  const spec = p.spec ?? {};
  const { reader, problems } = fieldReader();
  const problem = reader.problem;
  const targetRefs: ListenerPolicyInfo['targetRefs'] = [];
  (spec.targetRefs ?? []).forEach((t, i) => {
    if (t.group !== GATEWAY_GROUP || t.kind !== 'Gateway') {
      problem(`spec.targetRefs[${i}]`, `${t.group}/${t.kind} cannot be targeted (use ${GATEWAY_GROUP} Gateway)`);
      return;
    }
    targetRefs.push({ kind: 'Gateway', name: t.name, ...(t.sectionName ? { sectionName: t.sectionName } : {}) });
  });
  const settings: ListenerPolicyInfo['settings'] = {};
  if (spec.accessLog?.length) settings.accessLog = accessLogs(spec.accessLog, problem);
  const idleTimeout = reader.duration('spec.idleTimeout', spec.idleTimeout);
  if (idleTimeout) settings.idleTimeout = idleTimeout;
  if (spec.xffNumTrustedHops !== undefined) settings.xffNumTrustedHops = spec.xffNumTrustedHops;
  if (spec.useRemoteAddress !== undefined) settings.useRemoteAddress = spec.useRemoteAddress;
  if (spec.maxRequestHeadersKb !== undefined) {
    if (spec.maxRequestHeadersKb < 1 || spec.maxRequestHeadersKb > 8192) {
      problem('spec.maxRequestHeadersKb', 'must be between 1 and 8192 (Envoy max_request_headers_kb)');
    } else settings.maxRequestHeadersKb = spec.maxRequestHeadersKb;
  }
  if (spec.serverHeaderTransformation !== undefined) {
    const t = TRANSFORMATION[spec.serverHeaderTransformation];
    if (t) settings.serverHeaderTransformation = t;
    else problem('spec.serverHeaderTransformation', 'must be one of Overwrite, AppendIfAbsent, PassThrough');
  }
  if (spec.preserveHttp1HeaderCase !== undefined) settings.preserveHttp1HeaderCase = spec.preserveHttp1HeaderCase;
  const outcome = validationOutcome(id.ref, mode, problems, settings);
  return {
    ...id,
    targetRefs,
    selectors: [],
    settings: outcome.settings,
    accepted: outcome.accepted,
    findings: outcome.findings,
  };
}

type Report = { generation: number } & PolicyAncestorReport;

/** Does the policy name this Gateway, and how specifically for a port's listeners: 2 listener, 1 Gateway, 0 not. */
function rank(p: ListenerPolicyInfo, gw: string, listeners: string[]): number {
  let best = 0;
  for (const t of p.targetRefs) {
    if (t.name !== gw) continue;
    if (!t.sectionName) best = Math.max(best, 1);
    else if (listeners.includes(t.sectionName)) best = 2;
  }
  return best;
}

const older = (a: ListenerPolicyInfo, b: ListenerPolicyInfo) =>
  compareStrings(a.creationTimestamp, b.creationTimestamp) || compareStrings(a.key, b.key);

/**
 * Sets each HTTP listener's `hcm` from the policy that wins its port (and the default access log), and returns the
 * ancestor report of every policy naming this Gateway.
 */
export function applyListenerPolicies(
  gw: ObjRef,
  listeners: ListenerIR[],
  policies: ListenerPolicyInfo[],
  o: { mode: ValidationMode; allListenerNames: string[]; defaultAccessLog?: string },
): Record<string, Report> {
  const usable = policies.filter((p) => p.accepted.ok || o.mode === 'off');
  const won = new Map<string, string[]>();
  const lost = new Map<string, Set<string>>();
  for (const l of listeners) {
    const ranked = usable
      .map((p) => ({ p, r: rank(p, gw.name, l.gatewayListeners) }))
      .filter((x) => x.r > 0)
      .sort((a, b) => b.r - a.r || older(a.p, b.p));
    const winner = ranked[0]?.p;
    if (winner) won.set(winner.key, [...(won.get(winner.key) ?? []), l.name]);
    for (const { p } of ranked.slice(1)) lost.set(p.key, (lost.get(p.key) ?? new Set()).add(winner!.key));
    const hcm = settingsFor(winner, o.defaultAccessLog);
    if (hcm) l.hcm = hcm;
  }
  const out: Record<string, Report> = {};
  for (const p of policies) {
    if (!p.targetRefs.some((t) => t.name === gw.name)) continue;
    out[p.key] = {
      generation: p.generation,
      accepted: acceptedFor(p, o.mode),
      attached: attached(p, gw, o, won, lost),
    };
  }
  return out;
}

function acceptedFor(p: ListenerPolicyInfo, mode: ValidationMode): Outcome {
  if (p.accepted.ok || mode === 'strict') return p.accepted;
  return ok('Valid', `not validated (validation is off), sent as written: ${p.accepted.message}`);
}

function attached(
  p: ListenerPolicyInfo,
  gw: ObjRef,
  o: { mode: ValidationMode; allListenerNames: string[] },
  won: Map<string, string[]>,
  lost: Map<string, Set<string>>,
): Outcome {
  if (!p.accepted.ok && o.mode === 'strict') return bad('Invalid', `not applied: ${p.accepted.message}`);
  const missing = p.targetRefs
    .filter((t) => t.name === gw.name && t.sectionName && !o.allListenerNames.includes(t.sectionName))
    .map((t) => t.sectionName!);
  const w = won.get(p.key) ?? [];
  const l = [...(lost.get(p.key) ?? [])];
  if (!w.length && l.length) {
    return bad('Overridden', `overridden due to conflict with higher priority policy: ListenerPolicy ${l.join(', ')}`);
  }
  if (!w.length) {
    return bad(
      'TargetNotFound',
      `Gateway ${gw.namespace}/${gw.name} has no HTTP listener named ${missing.join(', ') || '(none)'}`,
    );
  }
  if (l.length)
    return ok('Merged', `applied on ${w.join(', ')}; overridden elsewhere by ListenerPolicy ${l.join(', ')}`);
  return ok('Attached', `applied on ${w.join(', ')}`);
}

/** The winner's settings with their provenance, and the default stdout access log when none is set. */
function settingsFor(winner: ListenerPolicyInfo | undefined, defaultAccessLog: string | undefined) {
  const provenance: Record<string, string> = {};
  const hcm: HcmSettingsIR = { provenance };
  if (winner) {
    Object.assign(hcm, winner.settings);
    for (const k of Object.keys(winner.settings)) provenance[k] = `ListenerPolicy/${winner.key}`;
  }
  if (!hcm.accessLog && defaultAccessLog) {
    hcm.accessLog = [{ path: '/dev/stdout' }];
    provenance.accessLog = `GatewayParameters/${defaultAccessLog}`;
  }
  return Object.keys(provenance).length ? hcm : undefined;
}
