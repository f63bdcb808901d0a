// BackendConfigPolicy (gateway.gwvendor.dev/v1alpha1, shaped after kgateway's BackendConfigPolicy): each policy
// validated on its own into the cluster settings it sets (BackendConfigIR: connect timeout, buffer limit, HTTP/1 and
// HTTP/2 options, load balancing, active health check, outlier detection, circuit breakers), with Accepted
// (False/Invalid naming the field for what the schema cannot check: zero durations, a ring whose minimum is over its
// maximum; True with the settings the proxy cannot honour listed as dropped). Then, per Gateway, which policy
// applies to a cluster (a Service port): one whose targetRef's sectionName names the port wins over one naming the
// whole Service (the more specific, as kgateway and GEP-713 have it), then the older policy (creationTimestamp, then
// namespace/name); the others are Attached=False/Overridden on that cluster. The policy's ancestors are the Gateways
// whose routes send to a Service it targets.
import { type BackendConfigPolicy, type HashPolicySpec, olderFirst, type Service } from '../model.ts';
import { parseDurationMs, toProtoDuration } from './duration.ts';
import { clusterPortName, type ServiceTarget, serviceTargetRefs, serviceTargets } from './service-targets.ts';
import {
  type BackendConfigIR,
  bad,
  type ClusterIR,
  compareStrings,
  type HashPolicyIR,
  type ObjRef,
  type Outcome,
  ok,
} from './types.ts';

export interface BackendConfigInfo {
  ref: ObjRef;
  generation: number;
  metadata: BackendConfigPolicy['metadata'];
  /** As the TrafficPolicy's (status/build.ts describes targets from them). */
  targetRefs: { kind: 'Service'; name: string; sectionName?: string }[];
  selectors: never[];
  targets: ServiceTarget[];
  accepted: Outcome;
  /** The settings (absent when the policy is invalid: then nothing of it is applied). */
  settings?: BackendConfigIR;
}

/** A positive duration in proto form, or the problem naming the field. */
function positive(text: string | undefined, field: string, problems: string[]): string | undefined {
  if (text === undefined) return undefined;
  const ms = parseDurationMs(text);
  if (ms === undefined || ms <= 0) {
    problems.push(`${field}: ${JSON.stringify(text)} must be a duration over 0 (e.g. 5s, 500ms)`);
    return undefined;
  }
  return toProtoDuration(text);
}

function hashPolicies(list: HashPolicySpec[] | undefined): HashPolicyIR[] | undefined {
  if (!list?.length) return undefined;
  return list.map((h): HashPolicyIR => {
    const terminal = h.terminal ? { terminal: true } : {};
    if (h.header) return { header: h.header.name, ...terminal };
    if (h.queryParameter) return { queryParameter: h.queryParameter.name, ...terminal };
    return { sourceIP: true, ...terminal };
  });
}

function loadBalancer(lb: NonNullable<BackendConfigPolicy['spec']>['loadBalancer'], problems: string[]) {
  if (!lb) return undefined;
  const out: NonNullable<BackendConfigIR['loadBalancer']> = {};
  if (lb.healthyPanicThreshold !== undefined) out.healthyPanicThreshold = lb.healthyPanicThreshold;
  const kinds = (['roundRobin', 'leastRequest', 'random', 'ringHash', 'maglev'] as const).filter((k) => lb[k]);
  if (kinds.length > 1) problems.push(`spec.loadBalancer: only one of ${kinds.join(', ')} may be set`);
  if (lb.roundRobin) out.policy = 'ROUND_ROBIN';
  if (lb.random) out.policy = 'RANDOM';
  if (lb.leastRequest) {
    out.policy = 'LEAST_REQUEST';
    if (lb.leastRequest.choiceCount !== undefined) out.choiceCount = lb.leastRequest.choiceCount;
  }
  if (lb.ringHash) {
    out.policy = 'RING_HASH';
    const { minimumRingSize: min, maximumRingSize: max } = lb.ringHash;
    if (min !== undefined && max !== undefined && min > max)
      problems.push(`spec.loadBalancer.ringHash: minimumRingSize ${min} is over maximumRingSize ${max}`);
    if (min !== undefined) out.minimumRingSize = min;
    if (max !== undefined) out.maximumRingSize = max;
    const hp = hashPolicies(lb.ringHash.hashPolicies);
    if (hp) out.hashPolicies = hp;
  }
  if (lb.maglev) {
    out.policy = 'MAGLEV';
    const hp = hashPolicies(lb.maglev.hashPolicies);
    if (hp) out.hashPolicies = hp;
  }
  return out;
}

/** Drops undefined values (the IR and golden files hold only what is set). */
function defined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

export function buildBackendConfigInfo(p: BackendConfigPolicy): BackendConfigInfo {
  const ns = p.metadata.namespace ?? 'default';
  const ref: ObjRef = { kind: 'BackendConfigPolicy', namespace: ns, name: p.metadata.name };
  const spec = p.spec ?? {};
  const refs = serviceTargetRefs(p);
  const base = {
    ref,
    generation: p.metadata.generation ?? 1,
    metadata: p.metadata,
    targetRefs: refs.map((t) => ({
      kind: 'Service' as const,
      name: t.name,
      ...(t.sectionName ? { sectionName: t.sectionName } : {}),
    })),
    selectors: [] as never[],
    targets: serviceTargets(p),
  };
  const problems: string[] = [];
  const dropped: string[] = [];
  const settings: BackendConfigIR = { policy: `BackendConfigPolicy/${ns}/${p.metadata.name}` };
  settings.connectTimeout = positive(spec.connectTimeout, 'spec.connectTimeout', problems);
  settings.perConnectionBufferLimitBytes = spec.perConnectionBufferLimitBytes;
  if (spec.http1ProtocolOptions) {
    const { headerFormat, ...rest } = spec.http1ProtocolOptions;
    // The proxy's HTTP/1.1 codec (Node's) writes header names as they are given: no proper-casing, no preserving.
    if (headerFormat) dropped.push('http1ProtocolOptions.headerFormat');
    if (Object.keys(rest).length) settings.http1 = rest;
  }
  if (spec.http2ProtocolOptions) {
    const { overrideStreamErrorOnInvalidHttpMessage, ...rest } = spec.http2ProtocolOptions;
    // The proxy's http2_protocol_options take the window sizes and max_concurrent_streams only (config/http2-options.ts).
    if (overrideStreamErrorOnInvalidHttpMessage !== undefined)
      dropped.push('http2ProtocolOptions.overrideStreamErrorOnInvalidHttpMessage');
    if (Object.keys(rest).length) settings.http2 = rest;
  }
  settings.loadBalancer = loadBalancer(spec.loadBalancer, problems);
  const hc = spec.healthCheck;
  if (hc) {
    const interval = positive(hc.interval, 'spec.healthCheck.interval', problems);
    const timeout = positive(hc.timeout, 'spec.healthCheck.timeout', problems);
    if (!hc.http?.path) problems.push('spec.healthCheck.http.path is required');
    if (interval && timeout && hc.http?.path) {
      settings.healthCheck = defined({
        path: hc.http.path,
        host: hc.http.host,
        method: hc.http.method,
        expectedStatuses: hc.http.expectedStatuses?.length ? hc.http.expectedStatuses : undefined,
        interval,
        timeout,
        unhealthyThreshold: hc.unhealthyThreshold,
        healthyThreshold: hc.healthyThreshold,
      });
    }
  }
  const od = spec.outlierDetection;
  if (od) {
    settings.outlierDetection = defined({
      consecutive5xx: od.consecutive5xx,
      interval: positive(od.interval, 'spec.outlierDetection.interval', problems),
      baseEjectionTime: positive(od.baseEjectionTime, 'spec.outlierDetection.baseEjectionTime', problems),
      maxEjectionPercent: od.maxEjectionPercent,
    });
  }
  if (spec.circuitBreakers) settings.circuitBreakers = defined({ ...spec.circuitBreakers });
  if (!refs.length) problems.push('spec.targetRefs: no Service (group "", kind Service) to target');
  if (problems.length) return { ...base, accepted: bad('Invalid', problems.join('; ')) };
  const message = dropped.length
    ? `policy accepted; dropped, the proxy cannot honour them: ${dropped.join(', ')}`
    : 'policy accepted';
  return { ...base, accepted: ok('Accepted', message), settings: defined(settings) };
}

export interface BackendConfigReport {
  generation: number;
  accepted: Outcome;
  attached: Outcome;
}

const keyOfInfo = (p: BackendConfigInfo) => `${p.ref.namespace}/${p.ref.name}`;

/**
 * The BackendConfigPolicies applied to a Gateway's clusters (copies with ClusterIR.backendConfig set: clusters are
 * shared by the Gateways a route attaches to) and every policy met reported: per cluster the policy naming its port,
 * else the Service; among equals the older; the others Overridden on it.
 */
export function applyBackendConfig(
  clusters: ClusterIR[],
  policiesFor: (namespace: string, service: string) => BackendConfigInfo[],
  service: (namespace: string, name: string) => Service | undefined,
): { clusters: ClusterIR[]; reports: Record<string, BackendConfigReport> } {
  const met = new Map<string, BackendConfigInfo>();
  const won = new Map<string, string[]>();
  const lost = new Map<string, string[]>();
  const note = (m: Map<string, string[]>, k: string, v: string) => m.set(k, [...(m.get(k) ?? []), v]);
  const out = clusters.map((c) => {
    if (c.members) return c;
    const portName = clusterPortName(c, service);
    // Valid policies that name this cluster's Service (and its port, when they name one), most specific first.
    const candidates = policiesFor(c.namespace, c.service)
      .map((p) => {
        const ts = p.targets.filter((t) => t.namespace === c.namespace && t.service === c.service);
        const section = ts.some((t) => t.sectionName !== undefined && t.sectionName === portName);
        const whole = ts.some((t) => t.sectionName === undefined);
        return { p, rank: section ? 0 : whole ? 1 : -1 };
      })
      .filter((x) => x.rank >= 0);
    for (const { p } of candidates) met.set(keyOfInfo(p), p);
    const usable = candidates.filter((x) => x.p.settings);
    usable.sort((a, b) => a.rank - b.rank || olderFirst(a.p, b.p));
    const winner = usable[0]?.p;
    if (!winner?.settings) return c;
    note(won, keyOfInfo(winner), c.name);
    for (const { p } of usable.slice(1)) note(lost, keyOfInfo(p), `${c.name} (to ${keyOfInfo(winner)})`);
    return { ...c, backendConfig: winner.settings };
  });
  const reports: Record<string, BackendConfigReport> = {};
  for (const [key, p] of [...met].sort(([a], [b]) => compareStrings(a, b))) {
    reports[key] = {
      generation: p.generation,
      accepted: p.accepted,
      attached: attachedOf(p, won.get(key), lost.get(key)),
    };
  }
  return { clusters: out, reports };
}

function attachedOf(p: BackendConfigInfo, won: string[] | undefined, lost: string[] | undefined): Outcome {
  if (!p.settings) return bad('Invalid', `not applied: ${p.accepted.message}`);
  if (!won?.length)
    return bad('Overridden', `overridden by a more specific or older BackendConfigPolicy on ${lost?.join(', ')}`);
  const applied = `applied to ${[...new Set(won)].join(', ')}`;
  return ok('Attached', lost?.length ? `${applied}; overridden on ${lost.join(', ')}` : applied);
}
