// One HTTPRoute, resolved on its own (independent of the Gateways it attaches to): defaults applied, backends
// resolved against Services and ReferenceGrants, filters turned into actions, regexes checked with the proxy's RE2
// engine. A Gateway then only has to place the entries; a route edit recomputes this and the Gateways that use it.

import { re2Error } from '../../shared/regex.ts';
import {
  type BackendObjectRef,
  GATEWAY_GROUP,
  type GRPCRoute,
  type HTTPRoute,
  type HTTPRouteFilter,
  type HTTPRouteMatch,
  type HTTPRouteRule,
  type ParentRef,
} from '../model.ts';
import { forwardAction, type RouteWorld, resolveServiceRef } from './backend-refs.ts';
import { toProtoDuration } from './duration.ts';
import { corsSettings, headerOps } from './http-settings.ts';
import {
  type ActionIR,
  type ClusterIR,
  compareStrings,
  type Finding,
  type HeaderOpsIR,
  type MatchIR,
  type MirrorIR,
  type ObjRef,
  type Outcome,
  type RouteEntryIR,
  type ValidationMode,
} from './types.ts';

export interface NormalizedParentRef {
  group: string;
  kind: string;
  namespace: string;
  name: string;
  sectionName?: string;
  port?: number;
  /** As written (status echoes it). */
  original: ParentRef;
}

export interface RouteInfo {
  ref: ObjRef;
  generation: number;
  creationTimestamp: string;
  labels: Record<string, string>;
  hostnames: string[];
  parentRefs: NormalizedParentRef[];
  /** Rule-matches to configure (strict mode: without the invalid rules). */
  entries: RouteEntryIR[];
  ruleCount: number;
  /** Rules left out because they are invalid (strict mode), with why. */
  droppedRules: { rule: number; message: string }[];
  resolvedRefs: Outcome;
  clusters: ClusterIR[];
  findings: Finding[];
}

export function normalizeParentRef(routeNs: string, p: ParentRef): NormalizedParentRef {
  return {
    group: p.group ?? GATEWAY_GROUP,
    kind: p.kind ?? 'Gateway',
    namespace: p.namespace ?? routeNs,
    name: p.name,
    ...(p.sectionName !== undefined ? { sectionName: p.sectionName } : {}),
    ...(p.port !== undefined ? { port: p.port } : {}),
    original: p,
  };
}

/**
 * The parents a route's parentRefs point at: Gateway keys (`ns/name`) and ListenerSet keys (`ListenerSet/ns/name`),
 * the index the Gateways look routes (of any kind) up by.
 */
export function routeGatewayKeys(
  route: Pick<HTTPRoute, 'metadata'> & { spec?: { parentRefs?: ParentRef[] } },
): string[] {
  const ns = route.metadata.namespace ?? 'default';
  const keys = new Set<string>();
  for (const p of route.spec?.parentRefs ?? []) {
    const n = normalizeParentRef(ns, p);
    if (n.group !== GATEWAY_GROUP) continue;
    if (n.kind === 'Gateway') keys.add(`${n.namespace}/${n.name}`);
    else if (n.kind === 'ListenerSet') keys.add(`ListenerSet/${n.namespace}/${n.name}`);
  }
  return [...keys];
}

function normalizeMatch(m: HTTPRouteMatch): MatchIR {
  const type = m.path?.type ?? 'PathPrefix';
  let value = m.path?.value ?? '/';
  // Prefixes match whole path segments, so `/api/` means `/api` (and precedence counts the same length).
  if (type === 'PathPrefix' && value.endsWith('/')) value = value.replace(/\/+$/, '') || '/';
  return {
    path: { type, value },
    headers: (m.headers ?? []).map((h) => ({ type: h.type ?? 'Exact', name: h.name, value: h.value })),
    queryParams: (m.queryParams ?? []).map((q) => ({ type: q.type ?? 'Exact', name: q.name, value: q.value })),
    ...(m.method ? { method: m.method } : {}),
  };
}

function checkMatch(m: MatchIR, field: string, problems: { field: string; message: string }[]): void {
  if (m.path.type === 'RegularExpression') {
    const err = re2Error(m.path.value);
    if (err)
      problems.push({
        field: `${field}.path.value`,
        message: `invalid RE2 regex ${JSON.stringify(m.path.value)}: ${err}`,
      });
  } else if (!m.path.value.startsWith('/')) {
    problems.push({
      field: `${field}.path.value`,
      message: `must start with "/" (got ${JSON.stringify(m.path.value)})`,
    });
  }
  m.headers.forEach((h, i) => {
    if (h.type !== 'RegularExpression') return;
    const err = re2Error(h.value);
    if (err)
      problems.push({
        field: `${field}.headers[${i}].value`,
        message: `invalid RE2 regex ${JSON.stringify(h.value)}: ${err}`,
      });
  });
  m.queryParams.forEach((q, i) => {
    if (q.type !== 'RegularExpression') return;
    const err = re2Error(q.value);
    if (err) {
      problems.push({
        field: `${field}.queryParams[${i}].value`,
        message: `invalid RE2 regex ${JSON.stringify(q.value)}: ${err}`,
      });
    }
  });
}

const SUPPORTED_FILTERS = new Set([
  'RequestHeaderModifier',
  'ResponseHeaderModifier',
  'RequestRedirect',
  'URLRewrite',
  'RequestMirror',
  'CORS',
]);

/** The filters a backendRef may carry (HTTPBackendRef.filters): header modifiers, applied to its requests only. */
const BACKEND_FILTERS = new Set(['RequestHeaderModifier', 'ResponseHeaderModifier']);

export function buildRouteInfo(route: HTTPRoute, world: RouteWorld, mode: ValidationMode): RouteInfo {
  const ns = route.metadata.namespace ?? 'default';
  const ref: ObjRef = { kind: 'HTTPRoute', namespace: ns, name: route.metadata.name };
  const from = { group: GATEWAY_GROUP, kind: 'HTTPRoute', namespace: ns };
  const rules: HTTPRouteRule[] = route.spec?.rules?.length
    ? route.spec.rules
    : [{ matches: [{ path: { type: 'PathPrefix', value: '/' } }] }];
  const built = new RouteRules(world, ref, mode);

  rules.forEach((rule, ri) => {
    const rf = `spec.rules[${ri}]`;
    const problems: { field: string; message: string }[] = [];
    const matches = (rule.matches?.length ? rule.matches : [{}]).map(normalizeMatch);
    matches.forEach((m, mi) => {
      checkMatch(m, `${rf}.matches[${mi}]`, problems);
    });
    const filters = ruleFilters(rule, rf, built.resolve);
    const timeouts = checkRule(rule, rf, matches, filters, problems);
    const retry = ruleRetry(rule, rf, problems);
    if (built.dropsRule(ri, problems, filters)) return;
    const action =
      built.filterFailure(filters) ??
      (filters.redirect
        ? redirectAction(filters.redirect)
        : forwardAction(world, from, rule, rf, built.refErrors, built.clusters));
    const { requestHeaders, responseHeaders, rewrite, mirrors, cors } = filters;
    const extra = {} as Parameters<RouteRules['addEntries']>[4]; // field by field: no spread temporaries per rule
    if (requestHeaders) extra.requestHeaders = requestHeaders;
    if (responseHeaders) extra.responseHeaders = responseHeaders;
    if (rewrite && (rewrite.hostname || rewrite.path)) extra.rewrite = rewrite;
    extra.mirrors = mirrors;
    if (timeouts && (timeouts.request || timeouts.backendRequest)) extra.timeouts = timeouts;
    if (retry) extra.retry = retry;
    if (cors) extra.cors = cors;
    built.addEntries(route, ri, matches, action, extra);
  });

  return built.info(route, rules.length);
}

/**
 * What building one route's rules accumulates, the same for HTTPRoute (here) and GRPCRoute (grpc-routes.ts): the
 * entries, the findings and the rules dropped for them, reference errors and the clusters its backends resolved to;
 * then the RouteInfo (ResolvedRefs from the first reference error, all messages joined; clusters sorted by name).
 */
export class RouteRules {
  readonly entries: RouteEntryIR[] = [];
  readonly findings: Finding[] = [];
  readonly dropped: { rule: number; message: string }[] = [];
  readonly refErrors: { reason: string; message: string }[] = [];
  readonly clusters = new Map<string, ClusterIR>();
  private readonly ref: ObjRef;
  private readonly mode: ValidationMode;
  /** Resolves a backendRef of the route (ruleFilters' mirror resolver), recording its cluster or its error. */
  readonly resolve: (b: BackendObjectRef, field: string) => ClusterIR | undefined;

  constructor(world: RouteWorld, ref: ObjRef, mode: ValidationMode) {
    this.ref = ref;
    this.mode = mode;
    const from = { group: GATEWAY_GROUP, kind: ref.kind, namespace: ref.namespace };
    this.resolve = (b, field) => {
      const res = resolveServiceRef(world, from, b, field);
      if (res.error) this.refErrors.push(res.error);
      else if (res.cluster) this.clusters.set(res.cluster.name, res.cluster);
      return res.cluster;
    };
  }

  /**
   * Records rule `ri`'s problems (its filters' too) as findings; true when the rule is left out for them (strict
   * validation: the rest of the route is served).
   */
  dropsRule(ri: number, problems: { field: string; message: string }[], filters: RuleFilters): boolean {
    if (filters.unsupportedType) problems.push(filters.unsupportedType);
    problems.push(...filters.problems);
    for (const p of problems) this.findings.push({ resource: this.ref, ...p });
    if (!problems.length || this.mode !== 'strict') return false;
    this.dropped.push({ rule: ri, message: problems.map((p) => `${p.field}: ${p.message}`).join('; ') });
    return true;
  }

  /**
   * A rule whose filters cannot be served answers 500 (an extensionRef of an unknown kind: also a reference error;
   * an unknown filter type kept with validation off): never served as if the filter were not there.
   */
  filterFailure(filters: RuleFilters): ActionIR | undefined {
    if (filters.unsupported) {
      this.refErrors.push({ reason: 'InvalidKind', message: filters.unsupported });
      return { type: 'direct', status: 500, reason: filters.unsupported };
    }
    if (filters.unsupportedType) {
      const reason = `${filters.unsupportedType.field}: ${filters.unsupportedType.message}`;
      return { type: 'direct', status: 500, reason };
    }
    return undefined;
  }

  /**
   * Rule `ri`'s entries, one per match, named `<kind>/<ns>/<name>/rule/<ri>/match/<mi>`, with `action` and what the
   * rule's filters and fields add to each.
   */
  addEntries(
    route: HTTPRoute | GRPCRoute,
    ri: number,
    matches: MatchIR[],
    action: ActionIR,
    extra: Omit<RouteEntryIR, 'name' | 'route' | 'rule' | 'ruleName' | 'match' | 'matchIR' | 'action'>,
  ): void {
    const rule = route.spec?.rules?.[ri];
    const kind = this.ref.kind.toLowerCase();
    matches.forEach((m, mi) => {
      this.entries.push({
        name: `${kind}/${this.ref.namespace}/${this.ref.name}/rule/${ri}/match/${mi}`,
        route: this.ref,
        rule: ri,
        ...(rule?.name ? { ruleName: rule.name } : {}),
        match: mi,
        matchIR: m,
        action,
        ...extra,
      });
    });
  }

  /** The route's RouteInfo; `clusters` replaces the resolved ones (GRPCRoute's, all HTTP/2). */
  info(route: HTTPRoute | GRPCRoute, ruleCount: number, clusters?: ClusterIR[]): RouteInfo {
    const resolvedRefs: Outcome = this.refErrors.length
      ? { ok: false, reason: this.refErrors[0].reason, message: this.refErrors.map((e) => e.message).join('; ') }
      : { ok: true, reason: 'ResolvedRefs', message: 'all references resolved' };
    const ns = route.metadata.namespace ?? 'default';
    return {
      ref: this.ref,
      generation: route.metadata.generation ?? 1,
      creationTimestamp: route.metadata.creationTimestamp ?? '',
      labels: route.metadata.labels ?? {},
      hostnames: route.spec?.hostnames ?? [],
      parentRefs: (route.spec?.parentRefs ?? []).map((p) => normalizeParentRef(ns, p)),
      entries: this.entries,
      ruleCount,
      droppedRules: this.dropped,
      resolvedRefs,
      clusters: [...(clusters ?? this.clusters.values())].sort((a, b) => compareStrings(a.name, b.name)),
      findings: this.findings,
    };
  }
}

export interface RuleFilters {
  requestHeaders?: HeaderOpsIR;
  responseHeaders?: HeaderOpsIR;
  redirect?: HTTPRouteFilter['requestRedirect'];
  rewrite?: RouteEntryIR['rewrite'];
  mirrors: MirrorIR[];
  cors?: RouteEntryIR['cors'];
  /** Problems of filters that are supported but wrongly configured (an origin pattern RE2 refuses). */
  problems: { field: string; message: string }[];
  /** Why the rule answers 500: an ExtensionRef filter, which no extension of ours resolves. */
  unsupported?: string;
  /** A filter type of the API the control plane does not implement (CORS, ExternalAuth): the rule is invalid. */
  unsupportedType?: { field: string; message: string };
}

/**
 * A rule's filters; `mirrorTo` resolves a mirror's backendRef (and records its cluster or error). `supported`: the
 * filter types of the route's kind (GRPCRoute has fewer: grpc-routes.ts).
 */
export function ruleFilters(
  rule: { filters?: HTTPRouteFilter[] },
  rf: string,
  mirrorTo: (b: BackendObjectRef, field: string) => ClusterIR | undefined,
  supported: ReadonlySet<string> = SUPPORTED_FILTERS,
): RuleFilters {
  const out: RuleFilters = { mirrors: [], problems: [] };
  (rule.filters ?? []).forEach((f, fi) => {
    const ff = `${rf}.filters[${fi}]`;
    if (f.type === 'ExtensionRef') {
      // "If a reference to a custom filter type cannot be resolved, the filter MUST NOT be skipped. Instead, requests
      // that would have been processed by that filter MUST receive a HTTP error response." (HTTPRouteFilter.Type)
      out.unsupported = `${ff}: filter type ExtensionRef${f.extensionRef ? ` (${f.extensionRef.group}/${f.extensionRef.kind} ${f.extensionRef.name})` : ''} is not supported`;
      return;
    }
    if (!supported.has(f.type)) {
      // "Unknown values here must result in the implementation setting the Accepted Condition for the Route to
      // status: False, with a Reason of UnsupportedValue" (HTTPRouteFilter.Type): the rule is invalid, dropped in
      // strict mode like any other (PartiallyInvalid, or Accepted=False when no rule is left).
      out.unsupportedType ??= {
        field: `${ff}.type`,
        message: `filter type ${f.type} is not supported (supported: ${[...supported].join(', ')})`,
      };
      return;
    }
    if (f.type === 'RequestHeaderModifier') out.requestHeaders = headerOps(f.requestHeaderModifier);
    else if (f.type === 'ResponseHeaderModifier') out.responseHeaders = headerOps(f.responseHeaderModifier);
    else if (f.type === 'RequestRedirect') out.redirect = f.requestRedirect ?? {};
    else if (f.type === 'URLRewrite' && f.urlRewrite) {
      out.rewrite = {
        ...(f.urlRewrite.hostname ? { hostname: f.urlRewrite.hostname } : {}),
        ...(f.urlRewrite.path ? { path: pathModifier(f.urlRewrite.path) } : {}),
      };
    } else if (f.type === 'CORS' && f.cors) {
      out.cors = corsSettings(f.cors, `${ff}.cors`, (field, message) => out.problems.push({ field, message }));
    } else if (f.type === 'RequestMirror' && f.requestMirror) {
      const cluster = mirrorTo(f.requestMirror.backendRef, `${ff}.requestMirror.backendRef`);
      if (cluster) out.mirrors.push({ cluster: cluster.name, ...mirrorFraction(f.requestMirror) });
    }
  });
  return out;
}

/** The rule's problems beyond its matches (prefix rewrites, durations, backendRef filters); its timeouts. */
function checkRule(
  rule: HTTPRouteRule,
  rf: string,
  matches: MatchIR[],
  filters: RuleFilters,
  problems: { field: string; message: string }[],
): RouteEntryIR['timeouts'] {
  for (const pm of [filters.redirect?.path, filters.rewrite?.path]) {
    if (pm?.type === 'ReplacePrefixMatch' && matches.some((m) => m.path.type !== 'PathPrefix')) {
      problems.push({
        field: `${rf}.filters`,
        message: 'ReplacePrefixMatch needs every match of the rule to be a PathPrefix',
      });
    }
  }
  let timeouts: RouteEntryIR['timeouts'];
  if (rule.timeouts) {
    const request = toProtoDuration(rule.timeouts.request);
    const backendRequest = toProtoDuration(rule.timeouts.backendRequest);
    if (rule.timeouts.request !== undefined && request === undefined) {
      problems.push({
        field: `${rf}.timeouts.request`,
        message: `invalid duration ${JSON.stringify(rule.timeouts.request)}`,
      });
    }
    if (rule.timeouts.backendRequest !== undefined && backendRequest === undefined) {
      problems.push({
        field: `${rf}.timeouts.backendRequest`,
        message: `invalid duration ${JSON.stringify(rule.timeouts.backendRequest)}`,
      });
    }
    timeouts = { ...(request ? { request } : {}), ...(backendRequest ? { backendRequest } : {}) };
  }
  backendFilterProblems(rule, rf, problems);
  return timeouts;
}

/** A backendRef filter other than the header modifiers (BACKEND_FILTERS) makes the rule invalid (HTTPRoute, GRPCRoute). */
export function backendFilterProblems(
  rule: { backendRefs?: { filters?: { type: string }[] }[] },
  rf: string,
  problems: { field: string; message: string }[],
): void {
  (rule.backendRefs ?? []).forEach((b, bi) => {
    (b.filters ?? []).forEach((f, fi) => {
      if (BACKEND_FILTERS.has(f.type)) return;
      problems.push({
        field: `${rf}.backendRefs[${bi}].filters[${fi}].type`,
        message: `filter type ${f.type} is not supported on a backendRef (supported: ${[...BACKEND_FILTERS].join(', ')})`,
      });
    });
  });
}

/**
 * The rule's `retry` (GEP-1731) as Envoy's retry policy: `attempts` retries (Envoy's default of 1 when unset), the
 * listed codes retried, and connection errors retried too, as the API says implementations SHOULD ("disconnect, reset,
 * timeout, TCP failure"); `backoff` is the base interval.
 */
function ruleRetry(
  rule: HTTPRouteRule,
  rf: string,
  problems: { field: string; message: string }[],
): RouteEntryIR['retry'] {
  const r = rule.retry;
  if (!r) return undefined;
  const statusCodes = [...(r.codes ?? [])];
  const backoff = toProtoDuration(r.backoff);
  if (r.backoff !== undefined && backoff === undefined) {
    problems.push({ field: `${rf}.retry.backoff`, message: `invalid duration ${JSON.stringify(r.backoff)}` });
  }
  return {
    attempts: r.attempts ?? 1,
    retryOn: ['connect-failure', 'refused-stream', 'reset', ...(statusCodes.length ? ['retriable-status-codes'] : [])],
    statusCodes,
    ...(backoff ? { backoffBaseInterval: backoff } : {}),
  };
}

/** The well-known port of a redirect scheme (HTTPRequestRedirectFilter.port, v1.6.1 httproute_types.go). */
const WELL_KNOWN_PORT: Record<string, number> = { http: 80, https: 443 };

function redirectAction(redirect: NonNullable<HTTPRouteFilter['requestRedirect']>): ActionIR {
  // No port: with a scheme, that scheme's well-known port (the spec's "MUST"); without, the request's (the listener's).
  const port = redirect.port ?? (redirect.scheme ? WELL_KNOWN_PORT[redirect.scheme] : undefined);
  return {
    type: 'redirect',
    statusCode: redirect.statusCode ?? 302,
    ...(redirect.scheme ? { scheme: redirect.scheme } : {}),
    ...(redirect.hostname ? { hostname: redirect.hostname } : {}),
    ...(port ? { port } : {}),
    ...(redirect.path ? { path: pathModifier(redirect.path) } : {}),
  };
}

function pathModifier(p: {
  type: 'ReplaceFullPath' | 'ReplacePrefixMatch';
  replaceFullPath?: string;
  replacePrefixMatch?: string;
}) {
  return {
    type: p.type,
    value: (p.type === 'ReplaceFullPath' ? p.replaceFullPath : p.replacePrefixMatch) ?? '/',
  };
}

function mirrorFraction(m: NonNullable<HTTPRouteFilter['requestMirror']>): { perMillion?: number } {
  if (m.fraction) {
    const d = m.fraction.denominator ?? 100;
    const pm = Math.round((m.fraction.numerator * 1_000_000) / d);
    return pm >= 1_000_000 ? {} : { perMillion: pm };
  }
  if (m.percent !== undefined && m.percent < 100) return { perMillion: m.percent * 10_000 };
  return {};
}
