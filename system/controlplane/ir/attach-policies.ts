// TrafficPolicy attachment and precedence, the one implementation (interfaces page, "Policies"): which policies reach
// one place a route is served (a Gateway, one of its listeners, an HTTPRoute, one of its named rules), at which level,
// and, per top-level field, which policy wins and by which rule:
//   1. the more specific attachment wins: route rule (sectionName) > route > listener > gateway;
//   2. then the older policy (creationTimestamp), then namespace/name;
//   settings of different fields merge.
// Pure. The IR builder merges each route entry's settings with it through GatewayPolicies (virtual-hosts.ts), which
// also tallies per policy what it won and lost over a Gateway (policy-reports.ts turns that into status), and
// `explain` (lab/tools/explain/attachment.ts) renders its decision instead of deciding a second time.
import { matchesLabels, olderFirst, POLICY_FIELDS, type PolicyField } from '../model.ts';
import type { ObjRef, PolicySettings } from './types.ts';

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

/** Why a policy lost a field to the winner: a more specific attachment, an older policy, or the name tie-break. */
export type PrecedenceRule = 'more specific' | 'older' | 'name';

export interface FieldDecision {
  field: PolicyField;
  /** `TrafficPolicy/<ns>/<name>`, as route provenance names it. */
  winner: string;
  level: AttachLevel;
  /** The policies that set the field too, each with the rule that put the winner above it. */
  over: { policy: string; level: AttachLevel; rule: PrecedenceRule }[];
}

export interface MergeResult {
  settings: PolicySettings;
  provenance: Partial<Record<PolicyField, string>>;
  /** Per policy key: the fields it supplied and those another policy supplied instead (with the winner and why). */
  outcomes: Map<string, { won: PolicyField[]; lost: { field: PolicyField; winner: string; rule: PrecedenceRule }[] }>;
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
function ruleBetween(winner: Candidate, loser: Candidate): PrecedenceRule {
  if (winner.level !== loser.level) return 'more specific';
  return winner.policy.creationTimestamp !== loser.policy.creationTimestamp ? 'older' : 'name';
}

/** Merges the policies that reach one route entry, field by field. */
export function mergePolicies(candidates: Candidate[]): MergeResult {
  const sorted = [...candidates].sort(byPrecedence);
  const settings: PolicySettings = {};
  const provenance: Partial<Record<PolicyField, string>> = {};
  const winnerOf = new Map<PolicyField, Candidate>();
  const decided = new Map<PolicyField, FieldDecision>();
  const outcomes: MergeResult['outcomes'] = new Map();
  const seen = new Set<string>();
  for (const c of sorted) {
    // The same policy can attach at several levels (e.g. by targetRef and by selector): its most specific counts.
    if (seen.has(c.policy.key)) continue;
    seen.add(c.policy.key);
    const out: { won: PolicyField[]; lost: { field: PolicyField; winner: string; rule: PrecedenceRule }[] } = {
      won: [],
      lost: [],
    };
    outcomes.set(c.policy.key, out);
    for (const f of POLICY_FIELDS) {
      if (c.policy.settings[f] === undefined) continue;
      const w = winnerOf.get(f);
      if (w) {
        const rule = ruleBetween(w, c);
        out.lost.push({ field: f, winner: policyName(w.policy), rule });
        decided.get(f)!.over.push({ policy: policyName(c.policy), level: c.level, rule });
        continue;
      }
      winnerOf.set(f, c);
      decided.set(f, { field: f, winner: policyName(c.policy), level: c.level, over: [] });
      (settings as Record<string, unknown>)[f] = c.policy.settings[f];
      provenance[f] = policyName(c.policy);
      out.won.push(f);
    }
  }
  const fields = POLICY_FIELDS.filter((f) => decided.has(f)).map((f) => decided.get(f)!);
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

/** Per policy over one Gateway: the fields it supplied on some route entry, and per field it lost, the winners. */
export interface PolicyTally<P extends AttachablePolicy = AttachablePolicy> {
  policy: P;
  won: Set<PolicyField>;
  lost: Map<PolicyField, Set<string>>;
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
  private readonly atRuleCache = new Map<string, Candidate<P>[]>();

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
    const candidates = [...this.atListener(listener), ...this.atRule(route, rule)];
    const merged = mergePolicies(candidates);
    for (const [key, out] of merged.outcomes) {
      const t = this.tally(candidates.find((c) => c.policy.key === key)!.policy);
      for (const f of out.won) t.won.add(f);
      for (const l of out.lost) {
        let winners = t.lost.get(l.field);
        if (!winners) {
          winners = new Set();
          t.lost.set(l.field, winners);
        }
        winners.add(l.winner);
      }
    }
    return { merged, candidates };
  }

  private tally(p: P): PolicyTally<P> {
    let t = this.tallies.get(p.key);
    if (!t) {
      t = { policy: p, won: new Set(), lost: new Map() };
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
    const k = `${route.kind ?? 'HTTPRoute'}/${route.namespace}/${route.name}|${rule ?? ''}`;
    let c = this.atRuleCache.get(k);
    if (!c) {
      const { kind: _kind, ...at } = route;
      c = candidatesAt({ route: at, ...(rule !== undefined ? { rule } : {}) }, this.routeReach(route));
      this.atRuleCache.set(k, c);
    }
    return c;
  }
}
