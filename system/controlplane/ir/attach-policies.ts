// TrafficPolicy attachment and precedence, the one implementation (interfaces page, "Policies"): which policies reach
// one place a route is served (a Gateway, one of its listeners, an HTTPRoute, one of its named rules), at which level,
// and, per top-level field, which policy wins and by which rule:
//   1. the more specific attachment wins: route rule (sectionName) > route > listener > gateway;
//   2. then the older policy (creationTimestamp), then namespace/name;
//   settings of different fields merge;
//   3. a policy with `spec.mergeType` (StrategicMerge | JSONMerge, Envoy Gateway's BackendTrafficPolicy mergeType;
//      kgateway's deep merge of sub-fields, kgateway issue #11528) does not replace the value of a field it sets: it
//      merges it onto the value below it in that order (the next policy that sets the field, at its level or a less
//      specific one; that one's own mergeType carries the merge further down), sub-field by sub-field as
//      policy-merge.ts says; the result is normalized as one policy's would be (policies.ts fieldSettingsOf), and
//      provenance names every policy merged, highest first (`TrafficPolicy/a/x+TrafficPolicy/a/y`). A merge whose
//      result is invalid is not made (the winner's value applies; the decision says why). Without mergeType nothing
//      changes.
// Pure. The IR builder merges each route entry's settings with it through GatewayPolicies (virtual-hosts.ts), which
// also tallies per policy what it won and lost over a Gateway (policy-reports.ts turns that into status), and
// `explain` (lab/tools/explain/attachment.ts) renders its decision instead of deciding a second time.
import { matchesLabels, olderFirst, POLICY_FIELDS, type PolicyField } from '../model.ts';
import { fieldSettingsOf, readFromSpec } from './policies.ts';
import { type MergeType, mergeable, mergeValue } from './policy-merge.ts';
import type { FieldDecision, ObjRef, PolicySettings, PrecedenceRule } from './types.ts';

export const LEVELS = ['gateway', 'listener', 'route', 'rule'] as const;
export type AttachLevel = (typeof LEVELS)[number];
const SPECIFICITY: Record<AttachLevel, number> = { gateway: 0, listener: 1, route: 2, rule: 3 };

/** What attachment and precedence read of a policy (ir/policies.ts PolicyInfo has it all). */
export interface AttachablePolicy {
  ref: ObjRef;
  /** `<namespace>/<name>` */
  key: string;
  creationTimestamp: string;
  targetRefs: { kind: 'Gateway' | 'HTTPRoute'; name: string; sectionName?: string }[];
  selectors: { kind: 'Gateway' | 'HTTPRoute'; matchLabels: Record<string, string> }[];
  /** The settings it supplies: a field it sets but cannot apply (invalid, unresolved ext auth) is absent. */
  settings: PolicySettings;
  /** Those fields as its spec writes them (what a merge merges); absent: its fields never merge. */
  spec?: Partial<Record<PolicyField, unknown>>;
  /** How its fields merge onto those of the policies below it (absent: they replace them). */
  mergeType?: MergeType;
}

/** One place a route entry is served: the Gateway, the listener it is on, the route and its rule's name. */
export interface AttachPoint {
  /** Absent: only the route's reach is asked (the IR builder asks the Gateway's once per listener). */
  gateway?: { namespace: string; name: string; labels?: Record<string, string> };
  /** The Gateway listener's name (a targetRef's sectionName on a Gateway names one). */
  listener?: string;
  route?: { namespace: string; name: string; labels?: Record<string, string> };
  /** The route rule's name (a targetRef's sectionName on an HTTPRoute names one). */
  rule?: string;
}

export interface Candidate<P extends AttachablePolicy = AttachablePolicy> {
  policy: P;
  level: AttachLevel;
  /** How it reaches the point. */
  by: 'targetRef' | 'selector';
}

// FieldDecision and PrecedenceRule live in types.ts (the IR carries them: RouteIR.precedence).
export type { FieldDecision, PrecedenceRule };

/** What one policy's settings came to at a route entry. */
export interface PolicyOutcome {
  /** Fields it is the winner of. */
  won: PolicyField[];
  /** Fields another policy supplied instead, with the policy it lost to (the last of a merge) and why. */
  lost: { field: PolicyField; winner: string; rule: Exclude<PrecedenceRule, 'merged'> }[];
  /** Fields whose setting merged its value with others': the policies merged, highest first (provenance's order). */
  merged: { field: PolicyField; policies: string[] }[];
}

export interface MergeResult {
  settings: PolicySettings;
  /** field → the policy that supplied it; a merged one names them all, highest first: `TrafficPolicy/a/x+TrafficPolicy/a/y`. */
  provenance: Partial<Record<PolicyField, string>>;
  /** Per policy key, in precedence order: what its settings came to. */
  outcomes: Map<string, PolicyOutcome>;
  /** Per field set by any candidate: the winner and the losers, in field order. */
  fields: FieldDecision[];
}

export interface PolicyDecision<P extends AttachablePolicy = AttachablePolicy> extends MergeResult {
  /** Every attachment of a policy to the point, most specific first per policy (a policy can reach it twice). */
  candidates: Candidate<P>[];
}

export function policyName(p: { ref: ObjRef }): string {
  return `TrafficPolicy/${p.ref.namespace}/${p.ref.name}`;
}

/** The ways `p` reaches the point, in the order targetRefs then selectors, Gateway first. Empty: it does not. */
export function attachmentsOf<P extends AttachablePolicy>(p: P, at: AttachPoint): Candidate<P>[] {
  const out: Candidate<P>[] = [];
  const gw = at.gateway;
  if (gw && p.ref.namespace === gw.namespace) {
    for (const t of p.targetRefs) {
      if (t.kind !== 'Gateway' || t.name !== gw.name) continue;
      if (!t.sectionName) out.push({ policy: p, level: 'gateway', by: 'targetRef' });
      else if (t.sectionName === at.listener) out.push({ policy: p, level: 'listener', by: 'targetRef' });
    }
    for (const s of p.selectors) {
      if (s.kind === 'Gateway' && matchesLabels(gw.labels, { matchLabels: s.matchLabels })) {
        out.push({ policy: p, level: 'gateway', by: 'selector' });
      }
    }
  }
  const r = at.route;
  if (r && p.ref.namespace === r.namespace) {
    for (const t of p.targetRefs) {
      if (t.kind !== 'HTTPRoute' || t.name !== r.name) continue;
      if (!t.sectionName) out.push({ policy: p, level: 'route', by: 'targetRef' });
      else if (t.sectionName === at.rule) out.push({ policy: p, level: 'rule', by: 'targetRef' });
    }
    for (const s of p.selectors) {
      if (s.kind === 'HTTPRoute' && matchesLabels(r.labels, { matchLabels: s.matchLabels })) {
        out.push({ policy: p, level: 'route', by: 'selector' });
      }
    }
  }
  return out;
}

const meta = (c: Candidate) => ({
  metadata: {
    name: c.policy.ref.name,
    namespace: c.policy.ref.namespace,
    creationTimestamp: c.policy.creationTimestamp,
  },
});

function byPrecedence(a: Candidate, b: Candidate): number {
  return SPECIFICITY[b.level] - SPECIFICITY[a.level] || olderFirst(meta(a), meta(b));
}

/** The rule that puts `winner` (sorted first) above `loser`. */
function ruleBetween(winner: Candidate, loser: Candidate): Exclude<PrecedenceRule, 'merged'> {
  if (winner.level !== loser.level) return 'more specific';
  return winner.policy.creationTimestamp !== loser.policy.creationTimestamp ? 'older' : 'name';
}

/**
 * The policies whose values of `f` make its setting, highest first: the first setter, then while the last one has a
 * mergeType, the next setter below it (the field's value of each merges onto those below it).
 */
function mergeChain(f: PolicyField, setters: Candidate[]): Candidate[] {
  const chain = [setters[0]!];
  // A field read with the world (extAuth: a reference), or named atomic, never merges: the winner's value applies.
  if (!mergeable(f) || !readFromSpec(f)) return chain;
  while (chain.length < setters.length && chain.at(-1)!.policy.mergeType) {
    const next = setters[chain.length]!;
    if (next.policy.spec?.[f] === undefined || chain.at(-1)!.policy.spec?.[f] === undefined) break;
    chain.push(next);
  }
  return chain;
}

/** The chain's values of `f` merged (lowest first, each one above merged onto it) and normalized, or why not. */
function mergedSettings(f: PolicyField, chain: Candidate[]): { settings?: unknown; problem?: string } {
  let raw = chain.at(-1)!.policy.spec![f];
  for (let i = chain.length - 2; i >= 0; i--) {
    raw = mergeValue(raw, chain[i]!.policy.spec![f], [f], chain[i]!.policy.mergeType!);
  }
  const r = fieldSettingsOf(f, raw);
  if (!r) return { problem: `${f} does not merge` };
  if (r.problems.length || r.settings === undefined) return { problem: r.problems.join('; ') || 'nothing to apply' };
  return { settings: r.settings };
}

/** The merge where no policy reaches: one shared, frozen result (nothing writes to a merge's result). */
const NOTHING_MERGED: MergeResult = Object.freeze({
  settings: Object.freeze({}),
  provenance: Object.freeze({}),
  outcomes: new Map(),
  fields: Object.freeze([]) as unknown as FieldDecision[],
});

/** Merges the policies that reach one route entry, field by field (interfaces page "Policies", and mergeType). */
export function mergePolicies(candidates: Candidate[]): MergeResult {
  // Most route entries have no policy at all, and this runs for every one.
  if (!candidates.length) return NOTHING_MERGED;
  // The same policy can attach at several levels (e.g. by targetRef and by selector): its most specific counts.
  const seen = new Set<string>();
  const sorted = [...candidates].sort(byPrecedence).filter((c) => !seen.has(c.policy.key) && seen.add(c.policy.key));
  const settings: PolicySettings = {};
  const provenance: Partial<Record<PolicyField, string>> = {};
  const fields: FieldDecision[] = [];
  const values = new Map<PolicyField, { value: unknown; provenance: string }>();
  const outcomes: MergeResult['outcomes'] = new Map(
    sorted.map((c) => [c.policy.key, { won: [], lost: [], merged: [] }]),
  );
  for (const f of POLICY_FIELDS) {
    const setters = sorted.filter((c) => c.policy.settings[f] !== undefined);
    if (!setters.length) continue;
    let chain = mergeChain(f, setters);
    let value: unknown = setters[0]!.policy.settings[f];
    let refused: string | undefined;
    if (chain.length > 1) {
      const m = mergedSettings(f, chain);
      if (m.problem) {
        refused = m.problem;
        chain = chain.slice(0, 1);
      } else value = m.settings;
    }
    const top = chain[0]!;
    const last = chain.at(-1)!;
    const names = chain.map((c) => policyName(c.policy));
    values.set(f, { value, provenance: names.join('+') });
    const decision: FieldDecision = { field: f, winner: names[0]!, level: top.level, over: [] };
    if (refused) decision.mergeRefused = refused;
    outcomes.get(top.policy.key)!.won.push(f);
    chain.forEach((c, i) => {
      if (chain.length > 1) outcomes.get(c.policy.key)!.merged.push({ field: f, policies: names });
      if (i === 0) return;
      const mergeType = chain[i - 1]!.policy.mergeType!;
      decision.over.push({ policy: names[i]!, level: c.level, rule: 'merged', mergeType });
    });
    // One left out lost to the last policy of the merge (the winner when nothing merged), by the rule between them.
    const to = names.at(-1)!;
    for (const c of setters.slice(chain.length)) {
      const rule = ruleBetween(last, c);
      outcomes.get(c.policy.key)!.lost.push({ field: f, winner: to, rule });
      decision.over.push({ policy: policyName(c.policy), level: c.level, rule, ...(chain.length > 1 ? { to } : {}) });
    }
    fields.push(decision);
  }
  // In the order the winners come (precedence, then field): the order settings and provenance have always had.
  for (const out of outcomes.values()) {
    for (const f of out.won) {
      (settings as Record<string, unknown>)[f] = values.get(f)!.value;
      provenance[f] = values.get(f)!.provenance;
    }
  }
  return { settings, provenance, outcomes, fields };
}

/**
 * Attachment and precedence at one point: the policies among `policies` that reach it, and the merge of their
 * settings with, per field, the winner and the rule that chose it.
 */
export function attachPolicies<P extends AttachablePolicy>(at: AttachPoint, policies: readonly P[]): PolicyDecision<P> {
  const candidates = candidatesAt(at, policies);
  return { candidates, ...mergePolicies(candidates) };
}

/** The attachments of every policy among `policies` to the point (attachPolicies without the merge). */
export function candidatesAt<P extends AttachablePolicy>(at: AttachPoint, policies: readonly P[]): Candidate<P>[] {
  return policies.flatMap((p) => attachmentsOf(p, at));
}

function addTo<K>(m: Map<K, Set<string>>, k: K, v: string): void {
  let s = m.get(k);
  if (!s) {
    s = new Set();
    m.set(k, s);
  }
  s.add(v);
}

/** Per policy over one Gateway: the fields it supplied on some route entry, and per field it lost, the winners. */
export interface PolicyTally<P extends AttachablePolicy = AttachablePolicy> {
  policy: P;
  won: Set<PolicyField>;
  lost: Map<PolicyField, Set<string>>;
  /** Per field its value was merged with others' on some route entry: the merges (provenance form). */
  merged: Map<PolicyField, Set<string>>;
}

/**
 * Attachment over one Gateway, for the IR builder: the candidates at each listener and route rule (each found once),
 * the merge at every route entry, and per policy a tally of what it won and lost over all of them.
 */
export class GatewayPolicies<P extends AttachablePolicy> {
  /** Insertion order: the policies in the order the Gateway first met them. */
  readonly tallies = new Map<string, PolicyTally<P>>();
  private readonly gateway: NonNullable<AttachPoint['gateway']>;
  private readonly gatewayReach: readonly P[];
  private readonly routeReach: (route: { namespace: string; name: string; kind?: string }) => readonly P[];
  private readonly atListenerCache = new Map<string, Candidate<P>[]>();
  /** Per route (the object mergeAt is given: the IR builder gives one per route) and rule name. */
  private readonly atRuleCache = new Map<object, Map<string, Candidate<P>[]>>();

  /**
   * `gatewayReach`: the policies that may attach to the Gateway (or its listeners); `routeReach`: those that may
   * attach to a route (or its rules). Both narrowed by the pipeline's indexes; attachmentsOf decides.
   */
  constructor(
    gateway: NonNullable<AttachPoint['gateway']>,
    gatewayReach: readonly P[],
    routeReach: (route: { namespace: string; name: string; kind?: string }) => readonly P[],
  ) {
    this.gateway = gateway;
    this.gatewayReach = gatewayReach;
    this.routeReach = routeReach;
  }

  /** The policies on the Gateway and on these listeners are attached even where they reach no route entry. */
  noteAttached(listeners: readonly string[]): void {
    for (const c of candidatesAt({ gateway: this.gateway }, this.gatewayReach)) this.tally(c.policy);
    for (const l of listeners) for (const c of this.atListener(l)) this.tally(c.policy);
  }

  /** Merges the policies that reach one route entry (its listener, route and rule name) and tallies the outcome. */
  mergeAt(
    listener: string,
    route: NonNullable<AttachPoint['route']> & { kind?: string },
    rule: string | undefined,
  ): { merged: MergeResult; candidates: Candidate<P>[] } {
    const atListener = this.atListener(listener);
    const atRule = this.atRule(route, rule);
    const candidates = atListener.length ? (atRule.length ? [...atListener, ...atRule] : atListener) : atRule;
    const merged = mergePolicies(candidates);
    if (merged.outcomes.size === 0) return { merged, candidates };
    for (const [key, out] of merged.outcomes) {
      const t = this.tally(candidates.find((c) => c.policy.key === key)!.policy);
      for (const f of out.won) t.won.add(f);
      for (const l of out.lost) addTo(t.lost, l.field, l.winner);
      for (const m of out.merged) addTo(t.merged, m.field, m.policies.join('+'));
    }
    return { merged, candidates };
  }

  private tally(p: P): PolicyTally<P> {
    let t = this.tallies.get(p.key);
    if (!t) {
      t = { policy: p, won: new Set(), lost: new Map(), merged: new Map() };
      this.tallies.set(p.key, t);
    }
    return t;
  }

  private atListener(listener: string): Candidate<P>[] {
    let c = this.atListenerCache.get(listener);
    if (!c) {
      c = candidatesAt({ gateway: this.gateway, listener }, this.gatewayReach);
      this.atListenerCache.set(listener, c);
    }
    return c;
  }

  private atRule(
    route: NonNullable<AttachPoint['route']> & { kind?: string },
    rule: string | undefined,
  ): Candidate<P>[] {
    let byRule = this.atRuleCache.get(route);
    if (!byRule) {
      byRule = new Map();
      this.atRuleCache.set(route, byRule);
    }
    let c = byRule.get(rule ?? '');
    if (!c) {
      const { kind: _kind, ...at } = route;
      c = candidatesAt({ route: at, ...(rule !== undefined ? { rule } : {}) }, this.routeReach(route));
      byRule.set(rule ?? '', c);
    }
    return c;
  }
}
