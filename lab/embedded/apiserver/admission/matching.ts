// Which requests a ValidatingAdmissionPolicy's `matchConstraints` or a binding's `matchResources` select, as
// k8s.io/apiserver pkg/admission/plugin/policy/matching/matching.go does it: the namespace selector (the request's
// namespace's labels; cluster-scoped requests other than Namespaces always pass), the object selector (the new or
// the old object's labels), then `resourceRules` minus `excludeResourceRules` (webhook/predicates/rules/rules.go:
// operations, groups, versions, `resource/subresource` with `*`, `*/*`, `r/*`, `*/s`, and scope), with
// `matchPolicy: Equivalent` also matching the same group-resource in another served version.
import { matchesLabelSelector } from '../../../../system/shared/selectors.ts';
import type { UserInfo } from '../authn.ts';
import type { ResourceRegistry, ResourceType } from '../resources.ts';
import type { K8sObject } from '../store.ts';

export type Operation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

/** One admission request (admission.Attributes). */
export interface AdmissionRequest {
  operation: Operation;
  rt: ResourceType;
  subresource?: string;
  name: string;
  namespace?: string;
  object?: K8sObject;
  oldObject?: K8sObject;
  user?: UserInfo;
  dryRun: boolean;
}

interface Rule {
  operations?: string[];
  apiGroups?: string[];
  apiVersions?: string[];
  resources?: string[];
  resourceNames?: string[];
  scope?: string;
}

const has = (list: string[] | undefined, v: string) => !!list && (list.includes('*') || list.includes(v));

function resourceMatches(patterns: string[] | undefined, resource: string, sub: string): boolean {
  return (patterns ?? []).some((p) => {
    const i = p.indexOf('/');
    const [r, s] = i < 0 ? [p, ''] : [p.slice(0, i), p.slice(i + 1)];
    return (r === '*' || r === resource) && (s === '*' || s === sub);
  });
}

function ruleMatches(rule: Rule, req: AdmissionRequest, rt: ResourceType): boolean {
  if (!has(rule.operations, req.operation)) return false;
  if (!has(rule.apiGroups, rt.group) || !has(rule.apiVersions, rt.version)) return false;
  if (!resourceMatches(rule.resources, rt.plural, req.subresource ?? '')) return false;
  if (rule.resourceNames?.length && !rule.resourceNames.includes(req.name)) return false;
  const scope = rule.scope ?? '*';
  if (scope === 'Cluster') return !rt.namespaced;
  if (scope === 'Namespaced') return rt.namespaced;
  return true;
}

/** With matchPolicy Equivalent: the same group-resource in the other served versions (conversion None). */
function equivalents(req: AdmissionRequest, registry: ResourceRegistry): ResourceType[] {
  return registry.all().filter((r) => r !== req.rt && r.group === req.rt.group && r.plural === req.rt.plural);
}

export interface MatchContext {
  registry: ResourceRegistry;
  /** The labels of a namespace (undefined when it does not exist). */
  namespaceLabels: (name: string) => Record<string, string> | undefined;
}

/** Whether `m` (matchConstraints or matchResources) selects `req`. */
export function matchesResources(m: any, req: AdmissionRequest, ctx: MatchContext): boolean {
  if (!namespaceMatches(m.namespaceSelector, req, ctx)) return false;
  const objSel = m.objectSelector;
  if (objSel && Object.keys(objSel).length) {
    const labels = (o?: K8sObject) => o?.metadata?.labels as Record<string, string> | undefined;
    const ok =
      (req.object && matchesLabelSelector(labels(req.object) ?? {}, objSel)) ||
      (req.oldObject && matchesLabelSelector(labels(req.oldObject) ?? {}, objSel));
    if (!ok) return false;
  }
  const ruleList: Rule[] = m.resourceRules ?? [];
  const matchesAny = (rt: ResourceType) => ruleList.some((r) => ruleMatches(r, req, rt));
  // A binding without resourceRules selects everything its policy's constraints allow.
  const included =
    !m.resourceRules ||
    matchesAny(req.rt) ||
    (m.matchPolicy !== 'Exact' &&
      ruleList.some((r) => has(r.apiGroups, req.rt.group)) &&
      equivalents(req, ctx.registry).some(matchesAny));
  if (!included) return false;
  return !(m.excludeResourceRules ?? []).some((r: Rule) => ruleMatches(r, req, req.rt));
}

function namespaceMatches(sel: any, req: AdmissionRequest, ctx: MatchContext): boolean {
  if (!sel || !Object.keys(sel).length) return true;
  const isNamespace = req.rt.builtin && req.rt.plural === 'namespaces';
  if (!req.rt.namespaced && !isNamespace) return true;
  const labels = isNamespace
    ? ((req.object ?? req.oldObject)?.metadata?.labels ?? {})
    : (ctx.namespaceLabels(req.namespace ?? '') ?? {});
  return matchesLabelSelector(labels, sel);
}
