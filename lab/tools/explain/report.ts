// The shape of an explanation (what explain prints and -o json gives) and the small readers of Kubernetes objects the
// analysis shares.

import type { AttachLevel, PrecedenceRule } from '../../../system/controlplane/ir/attach-policies.ts';
import type { MergeType } from '../../../system/controlplane/ir/policy-merge.ts';
import type { Condition, KObj } from '../../toolkit/kube.ts';
import { VENDOR_API } from '../proxies.ts';

export const KINDS = [
  'HTTPRoute',
  'GRPCRoute',
  'TCPRoute',
  'UDPRoute',
  'TLSRoute',
  'Gateway',
  'TrafficPolicy',
  'GatewayExtension',
  'BackendConfigPolicy',
  'ListenerPolicy',
] as const;
export type ExplainKind = (typeof KINDS)[number];

export interface Target {
  kind: ExplainKind;
  namespace: string;
  name: string;
  /** `gateway/<name>/<listener>`: only that listener of the Gateway. */
  listener?: string;
}

export interface Finding {
  level: 'problem' | 'ok' | 'note';
  /** The rule of contract section 7 that explains it, when one does. */
  rule?: 1 | 2 | 3;
  /** `Kind ns/name` the finding is about. */
  subject: string;
  message: string;
  details?: string[];
  /** YAML that fixes it once applied (a missing ReferenceGrant). */
  yaml?: string;
  /** A status and the proxies' configuration say different things. */
  disagreement?: boolean;
}

export interface PolicyReport {
  /** The policy's kind when not a TrafficPolicy (ListenerPolicy). */
  kind?: 'ListenerPolicy';
  policy: string;
  created: string;
  /** How it reaches the object under explanation: `targetRef HTTPRoute web`, `selector HTTPRoute app=web`, ... */
  via: string[];
  status: { accepted?: Condition; attached?: Condition[]; resolvedRefs?: Condition };
  /** The settings its spec sets. */
  fields: string[];
  /** Settings found in config_dump with this policy as their provenance. */
  applied: string[];
  notApplied: string[];
  verdict: 'applied' | 'partly applied' | 'not applied' | 'not checked';
  /** The control plane's attachment decision over the same routes, per field the policy supplies (attachment.ts). */
  decision?: FieldDecisionSummary[];
  /** Why not checked (no proxy config could be read for its targets). */
  uncheckedWhy?: string;
}

/** What the control plane's attachment decision gives one policy for one field over the scope (attachment.ts). */
export interface FieldDecisionSummary {
  field: string;
  /** HTTPRoutes (`ns/name`) on which the rules give this policy the field (on at least one of its rules). */
  wonOn: string[];
  /**
   * The policies the rules give the field to instead, with the rule and the routes; rule `merged`: its value is merged
   * under that policy's (which has a mergeType, named), sub-fields the winner does not set surviving.
   */
  lostTo: { winner: string; rule: PrecedenceRule; level: AttachLevel; routes: string[]; mergeType?: MergeType }[];
  /** Where it wins with other policies' values merged under its own: the merge (provenance form) and the routes. */
  merges?: { policies: string; routes: string[] }[];
  /** A merge its mergeType asks for that the control plane did not make (an invalid result), and why. */
  mergeRefused?: string;
}

export interface Report {
  target: Target;
  found: boolean;
  healthy: boolean;
  findings: Finding[];
  policies: PolicyReport[];
  /** The proxies consulted: Gateway → pods with state, and whether their config_dump was read. */
  proxies: { gateway: string; pods: { pod: string; ready: boolean; state: string; configRead: boolean }[] }[];
}

export const GW_GROUP = 'gateway.networking.k8s.io';
export const VENDOR_GROUP = VENDOR_API.split('/')[0];

export const subjectOf = (kind: string, o: { namespace: string; name: string }) => `${kind} ${o.namespace}/${o.name}`;
export const cond = (conds: Condition[] | undefined, type: string) => (conds ?? []).find((c) => c.type === type);
export const labelsText = (l: Record<string, string> | undefined) =>
  Object.entries(l ?? {})
    .map(([k, v]) => `${k}=${v}`)
    .join(',') || '(no labels)';
export const matches = (want: Record<string, string>, have: Record<string, string> | undefined) =>
  Object.entries(want).every(([k, v]) => have?.[k] === v);
export const condText = (c: Condition | undefined) =>
  c ? `${c.type}=${c.status}${c.reason ? ` (${c.reason})` : ''}` : 'no status';

/** creationTimestamp as RFC 3339 text (client-node returns a Date). */
export const created = (o: KObj) => {
  const t = o.metadata?.creationTimestamp as unknown;
  return t instanceof Date ? t.toISOString() : String(t ?? '');
};

export function find(list: KObj[], namespace: string, name: string): KObj | undefined {
  return list.find((o) => o.metadata?.namespace === namespace && o.metadata?.name === name);
}
