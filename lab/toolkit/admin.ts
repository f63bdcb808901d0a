// Clients for the two admin servers a user reaches by port-forward: the control plane's (9095) and each proxy's
// Envoy-compatible admin (19000), plus readers for what they serve (config_dump, error_state, route provenance).
import { formatLabelSelector, type LabelSelector, labelSelectorRequirements } from '../../system/shared/selectors.ts';
import type { Kube } from './kube.ts';
import { type PortForward, portForward } from './portforward.ts';

export const CONTROL_PLANE = { namespace: 'gwvendor-system', deployment: 'gwvendor', adminPort: 9095 } as const;
export const PROXY_ADMIN_PORT = 19000;
/** The filter_metadata key under which each route names the policy that supplied each setting. */
export const PROVENANCE_KEY = 'merge.TrafficPolicy.gateway.gwvendor.dev';
export const GATEWAY_NAME_LABEL = 'gateway.networking.k8s.io/gateway-name';

export interface AdminResponse {
  status: number;
  headers: Headers;
  text: string;
}

export interface AdminSession {
  url: string;
  pod: string;
  get(path: string): Promise<AdminResponse>;
  json<T = any>(path: string): Promise<T>;
  post(path: string, body?: string): Promise<AdminResponse>;
  close(): Promise<void>;
}

export function adminSession(forward: Pick<PortForward, 'url' | 'pod' | 'close'>, what: string): AdminSession {
  const call = async (method: string, path: string, body?: string): Promise<AdminResponse> => {
    const res = await fetch(forward.url + path, {
      method,
      body,
      signal: AbortSignal.timeout(15_000),
    }).catch((err: Error) => {
      throw new Error(
        `${what}: ${method} ${path} failed: ${err.cause instanceof Error ? err.cause.message : err.message}`,
      );
    });
    return { status: res.status, headers: res.headers, text: await res.text() };
  };
  return {
    url: forward.url,
    pod: forward.pod,
    get: (path) => call('GET', path),
    post: (path, body) => call('POST', path, body),
    async json(path) {
      const r = await call('GET', path);
      if (r.status !== 200) throw new Error(`${what}: GET ${path} answered ${r.status}: ${r.text.slice(0, 300)}`);
      try {
        return JSON.parse(r.text);
      } catch {
        throw new Error(`${what}: GET ${path} is not JSON: ${r.text.slice(0, 300)}`);
      }
    },
    close: () => forward.close(),
  };
}

/** The control plane's pod label selector, read from its Deployment (so a renamed label does not break tools). */
export async function controlPlaneSelector(kube: Kube): Promise<string> {
  const d = await kube.get('apps/v1', 'Deployment', CONTROL_PLANE.deployment, CONTROL_PLANE.namespace);
  if (!d) {
    throw new Error(
      `deployment ${CONTROL_PLANE.deployment} not found in ${CONTROL_PLANE.namespace}: is the system installed? (npm run lab:up)`,
    );
  }
  return selectorString(d.spec?.selector);
}

/** A workload's metav1.LabelSelector (matchLabels and matchExpressions) as a list's `labelSelector` text. */
export function selectorString(selector: LabelSelector | undefined): string {
  return formatLabelSelector(labelSelectorRequirements(selector) ?? []);
}

export async function openControlPlaneAdmin(kube: Kube): Promise<AdminSession> {
  const fwd = await portForward(kube.kc, {
    namespace: CONTROL_PLANE.namespace,
    labelSelector: await controlPlaneSelector(kube),
    port: CONTROL_PLANE.adminPort,
  });
  return adminSession(fwd, `control plane admin (${fwd.pod})`);
}

export async function openProxyAdmin(kube: Kube, gw: { namespace: string; name: string }): Promise<AdminSession> {
  const fwd = await portForward(kube.kc, {
    namespace: gw.namespace,
    labelSelector: `${GATEWAY_NAME_LABEL}=${gw.name}`,
    port: PROXY_ADMIN_PORT,
  });
  return adminSession(fwd, `proxy admin of Gateway ${gw.namespace}/${gw.name} (${fwd.pod})`);
}

/**
 * Sets log levels the way both admin servers accept: `POST /logging?level=<l>` for every logger, or one
 * `POST /logging?<logger>=<l>` per entry.
 */
export async function setLogLevel(admin: AdminSession, level: string | Record<string, string>): Promise<void> {
  const queries =
    typeof level === 'string'
      ? [`level=${encodeURIComponent(level)}`]
      : Object.entries(level).map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`);
  for (const q of queries) {
    const r = await admin.post(`/logging?${q}`);
    // The control plane answers its form post with a redirect to /logging; both are success.
    if (r.status >= 400) throw new Error(`POST /logging?${q} answered ${r.status}: ${r.text.slice(0, 300)}`);
  }
}

export async function configDump(admin: AdminSession, opts: { includeEds?: boolean } = {}): Promise<ConfigDump> {
  return admin.json<ConfigDump>(`/config_dump${opts.includeEds ? '?include_eds' : ''}`);
}

export interface ConfigDump {
  configs: Array<Record<string, any> & { '@type': string }>;
}

const ROUTES_DUMP = 'type.googleapis.com/envoy.admin.v3.RoutesConfigDump';

export interface RouteHit {
  routeConfig: string;
  vhost: string;
  domains: string[];
  route: any;
  name: string;
  /** Setting (e.g. `timeouts`) → `namespace/name` of the TrafficPolicy that supplied it. */
  provenance: Record<string, string>;
}

/** Every route configuration in a dump, dynamic and static. */
export function routeConfigs(dump: ConfigDump): any[] {
  const out: any[] = [];
  for (const c of dump.configs ?? []) {
    if (c['@type'] !== ROUTES_DUMP) continue;
    for (const d of c.dynamic_route_configs ?? []) if (d.route_config) out.push(d.route_config);
    for (const s of c.static_route_configs ?? []) if (s.route_config) out.push(s.route_config);
  }
  return out;
}

/** Envoy's domain matching: exact, `*.suffix`, `prefix*`, or `*`. */
export function domainMatches(domain: string, host: string): boolean {
  const h = host.toLowerCase().replace(/:\d+$/, '');
  const d = domain.toLowerCase();
  if (d === '*') return true;
  if (d.startsWith('*')) return h.endsWith(d.slice(1)) && h.length > d.length - 1;
  if (d.endsWith('*')) return h.startsWith(d.slice(0, -1));
  return d === h || d === host.toLowerCase();
}

function pathMatches(match: any, path: string): boolean {
  if (!match) return false;
  if (match.prefix !== undefined) return path.startsWith(match.prefix);
  if (match.path !== undefined) return path === match.path;
  if (match.path_separated_prefix !== undefined) {
    const p = match.path_separated_prefix;
    return path === p || path.startsWith(`${p}/`);
  }
  if (match.safe_regex?.regex !== undefined) return new RegExp(`^(?:${match.safe_regex.regex})$`).test(path);
  return false;
}

/**
 * Routes of a dump, filtered by a Host (Envoy's domain matching) and a request path (the route's path match), in
 * config order. Header/query/method matches are not evaluated: the hit carries the route so a test can look.
 */
export function findRoutes(dump: ConfigDump, q: { host?: string; path?: string } = {}): RouteHit[] {
  const hits: RouteHit[] = [];
  for (const rc of routeConfigs(dump)) {
    for (const vh of rc.virtual_hosts ?? []) {
      const domains: string[] = vh.domains ?? [];
      if (q.host !== undefined && !domains.some((d) => domainMatches(d, q.host!))) continue;
      for (const route of vh.routes ?? []) {
        if (q.path !== undefined && !pathMatches(route.match, q.path)) continue;
        hits.push({
          routeConfig: rc.name,
          vhost: vh.name,
          domains,
          route,
          name: route.name ?? '',
          provenance: route.metadata?.filter_metadata?.[PROVENANCE_KEY] ?? {},
        });
      }
    }
  }
  return hits;
}

export interface DynamicError {
  typeUrl: string;
  name?: string;
  error: string;
  lastUpdateAttempt?: string;
}

/** Every `error_state` of a dump: the resources the proxy rejected (NACKed), with the reason. */
export function dynamicErrors(dump: ConfigDump): DynamicError[] {
  const out: DynamicError[] = [];
  const visit = (typeUrl: string, v: unknown, name?: string): void => {
    if (Array.isArray(v)) {
      for (const x of v) visit(typeUrl, x, name);
      return;
    }
    if (!v || typeof v !== 'object') return;
    const o = v as Record<string, any>;
    const ownName = o.name ?? name;
    if (o.error_state) {
      out.push({
        typeUrl,
        name: ownName,
        error: String(o.error_state.details ?? JSON.stringify(o.error_state)),
        lastUpdateAttempt: o.error_state.last_update_attempt,
      });
    }
    for (const [k, x] of Object.entries(o)) if (k !== 'error_state') visit(typeUrl, x, ownName);
  };
  for (const c of dump.configs ?? []) visit(c['@type'], c);
  return out;
}
