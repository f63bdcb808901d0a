// GET /config_dump: Envoy's envoy.admin.v3.ConfigDump, built as canonical proto JSON (every Any with "@type",
// canonicalized through the Envoy protos), with the `resource`, `mask`, `name_regex` and `include_eds` parameters
// and Envoy's error texts.
import protobuf from 'protobufjs';
import { canonicalize } from '../../shared/envoy/protojson.ts';
import { lookupType, TYPE_URL, typeUrlOf } from '../../shared/envoy/protos.ts';
import { redactSecrets } from '../../shared/envoy/redact.ts';
import { compileRe2, type Re2 } from '../../shared/regex.ts';
import type { ServerInstance } from '../server-instance.ts';
import type { Cluster } from '../upstream/cluster.ts';
import type { ErrorState } from '../xds/resource-state.ts';

type J = Record<string, any>;

const ADMIN = 'type.googleapis.com/envoy.admin.v3.';

export class AdminError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

function errorEntry(e: ErrorState | undefined): J {
  return e ? { error_state: e } : {};
}

function endpointConfig(c: Cluster): J {
  const byLocality = new Map<string, J>();
  for (const h of c.hosts) {
    const key = `${h.priority}|${JSON.stringify(h.locality ?? {})}`;
    let loc = byLocality.get(key);
    if (!loc) {
      loc = { locality: h.locality ?? {}, lb_endpoints: [], priority: h.priority };
      byLocality.set(key, loc);
    }
    loc.lb_endpoints.push({
      endpoint: {
        address: { socket_address: { address: h.address, port_value: h.port } },
        health_check_config: {},
        hostname: h.hostname,
      },
      health_status: h.health,
      load_balancing_weight: h.weight,
      ...(h.metadata ? { metadata: h.metadata } : {}),
    });
  }
  return {
    '@type': TYPE_URL.clusterLoadAssignment,
    cluster_name: c.spec.edsServiceName,
    endpoints: [...byLocality.values()],
    policy: { overprovisioning_factor: 140 },
  };
}

/** A cluster as config_dump shows it: its JSON with the `@type`, client certificates' private keys `[redacted]`. */
const clusterJson = (c: { spec: { json: Record<string, unknown> } }) =>
  redactSecrets({ '@type': TYPE_URL.cluster, ...c.spec.json });

/** The dumps in Envoy's order, each `{type, json}` (json with its own "@type"), names filtered by `match`. */
export function buildDumps(srv: ServerInstance, match: (name: string) => boolean, includeEds: boolean): J[] {
  const cm = srv.clusters;
  const lm = srv.listeners;
  const rm = srv.routes;
  const dumps: J[] = [];
  dumps.push({
    '@type': ADMIN + 'BootstrapConfigDump',
    bootstrap: srv.bootstrap,
    last_updated: srv.startedAt,
  });
  // Clusters
  const clusters: J = { '@type': ADMIN + 'ClustersConfigDump' };
  if (cm.cdsVersion) clusters.version_info = cm.cdsVersion;
  clusters.static_clusters = [...cm.static_.values()]
    .filter((e) => match(e.cluster.name))
    .map((e) => ({ cluster: clusterJson(e.cluster), last_updated: e.lastUpdated }));
  const activeNames = [...new Set([...cm.active.keys(), ...cm.errors.keys()])]
    .filter((n) => !cm.warming.has(n) || cm.active.has(n))
    .sort();
  clusters.dynamic_active_clusters = activeNames.filter(match).map((name) => {
    const e = cm.active.get(name);
    const err = cm.errors.get(name);
    const base: J = e
      ? {
          version_info: e.versionInfo,
          cluster: clusterJson(e.cluster),
          last_updated: e.lastUpdated,
        }
      : {};
    return { ...base, ...errorEntry(err), client_status: err ? 'NACKED' : 'ACKED' };
  });
  clusters.dynamic_warming_clusters = [...cm.warming.entries()]
    .filter(([n]) => match(n))
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([, e]) => ({
      version_info: e.versionInfo,
      cluster: clusterJson(e.cluster),
      last_updated: e.lastUpdated,
      client_status: 'ACKED',
    }));
  dumps.push(clusters);
  if (includeEds) {
    const eds: J = { '@type': ADMIN + 'EndpointsConfigDump' };
    eds.static_endpoint_configs = cm
      .all()
      .filter((c) => !c.addedViaApi && match(c.spec.edsServiceName))
      .map((c) => ({ endpoint_config: endpointConfig(c) }));
    eds.dynamic_endpoint_configs = cm
      .all()
      .filter((c) => c.addedViaApi && match(c.spec.edsServiceName))
      .map((c) => {
        const v = cm.edsVersions.get(c.spec.edsServiceName);
        return {
          ...(v ? { version_info: v.version, last_updated: v.lastUpdated } : {}),
          endpoint_config: endpointConfig(c),
          client_status: 'ACKED',
        };
      });
    dumps.push(eds);
  }
  // Listeners
  const listeners: J = { '@type': ADMIN + 'ListenersConfigDump' };
  if (lm.ldsVersion) listeners.version_info = lm.ldsVersion;
  listeners.static_listeners = [...lm.static_.values()]
    .filter((l) => match(l.spec.name))
    .map((l) => ({
      listener: redactSecrets({ '@type': TYPE_URL.listener, ...l.spec.json }),
      last_updated: l.lastUpdated,
    }));
  const names = [...new Set([...lm.active.keys(), ...lm.warming.keys(), ...lm.errors.keys()])].sort();
  listeners.dynamic_listeners = names.filter(match).map((name) => {
    const state = (l: { versionInfo: string; spec: { json: J }; lastUpdated: string } | undefined) =>
      l
        ? {
            version_info: l.versionInfo,
            listener: redactSecrets({ '@type': TYPE_URL.listener, ...l.spec.json }),
            last_updated: l.lastUpdated,
          }
        : undefined;
    const err = lm.errors.get(name);
    const out: J = { name };
    const active = state(lm.active.get(name));
    const warming = state(lm.warming.get(name));
    if (active) out.active_state = active;
    if (warming) out.warming_state = warming;
    if (err) out.error_state = redactSecrets(err);
    out.client_status = err ? 'NACKED' : 'ACKED';
    return out;
  });
  dumps.push(listeners);
  dumps.push({ '@type': ADMIN + 'ScopedRoutesConfigDump' });
  // Routes: inline route configs of every listener are "static", RDS ones dynamic.
  const routes: J = { '@type': ADMIN + 'RoutesConfigDump' };
  const inline: J[] = [];
  for (const l of [...lm.static_.values(), ...lm.active.values()]) {
    const rc = l.spec.hcm.route_config as J | undefined;
    if (rc && match(String(rc.name ?? ''))) {
      inline.push({ route_config: { '@type': TYPE_URL.routeConfiguration, ...rc }, last_updated: l.lastUpdated });
    }
  }
  routes.static_route_configs = inline;
  routes.dynamic_route_configs = [...rm.providers.values()]
    .filter((p) => match(p.name) && (p.json || p.error))
    .sort((a, b) => (a.name < b.name ? -1 : 1))
    .map((p) => ({
      ...(p.json
        ? {
            version_info: p.versionInfo,
            route_config: { '@type': TYPE_URL.routeConfiguration, ...p.json },
            last_updated: p.lastUpdated,
          }
        : {}),
      ...errorEntry(p.error),
      client_status: p.error ? 'NACKED' : 'ACKED',
    }));
  dumps.push(routes);
  dumps.push({ '@type': ADMIN + 'SecretsConfigDump' });
  return dumps;
}

// ---------------------------------------------------------------------------------------------------------------
// Field masks (google.protobuf.FieldMask semantics of FieldMaskUtil::TrimMessage, on canonical JSON)

function typeOf(json: J): protobuf.Type {
  const url = String(json['@type']);
  return lookupType(url.slice(url.lastIndexOf('/') + 1));
}

/** True when every path names fields of `type` (non-last components singular messages), as FieldMaskUtil checks. */
function maskFits(paths: string[], type: protobuf.Type): boolean {
  return paths.every((p) => {
    let t: protobuf.Type | undefined = type;
    const parts = p.split('.');
    for (let i = 0; i < parts.length; i++) {
      const f: protobuf.Field | null | undefined = t?.fields[parts[i]!];
      if (!f) return false;
      if (i < parts.length - 1) {
        if (f.repeated || f.map) return false;
        f.resolve();
        if (!(f.resolvedType instanceof protobuf.Type)) return false;
        t = f.resolvedType;
      }
    }
    return true;
  });
}

interface MaskTree {
  [k: string]: MaskTree;
}

const WHOLE = new WeakSet<MaskTree>();

/** Paths as a tree; a path that is a prefix of another keeps the whole field (FieldMask union semantics). */
function tree(paths: string[]): MaskTree {
  const root: MaskTree = {};
  for (const p of [...paths].sort((a, b) => a.length - b.length)) {
    let n = root;
    const parts = p.split('.');
    for (let i = 0; i < parts.length; i++) {
      const k = parts[i]!;
      if (n[k] && WHOLE.has(n[k]!)) break;
      n[k] ??= {};
      n = n[k]!;
      if (i === parts.length - 1) WHOLE.add(n);
    }
  }
  return root;
}

function trim(json: J, t: MaskTree, keep: Set<string> = new Set()): J {
  const out: J = {};
  for (const k of Object.keys(json)) {
    if (keep.has(k)) {
      out[k] = json[k];
      continue;
    }
    const sub = t[k];
    if (!sub) continue;
    if (WHOLE.has(sub) || json[k] === null || typeof json[k] !== 'object' || Array.isArray(json[k])) {
      out[k] = json[k];
    } else {
      const inner = trim(json[k], sub);
      if (Object.keys(inner).length > 0) out[k] = inner;
    }
  }
  return out;
}

/**
 * A mask on a resource element (DynamicListener, StaticCluster, ...): paths that go through the element's Any field
 * are applied inside the Any (Envoy's trimResourceMessage); false when the mask does not fit.
 */
function trimResource(el: J, elType: protobuf.Type, paths: string[]): J | undefined {
  const outer: string[] = [];
  const inner: string[] = [];
  let anyField: string | undefined;
  for (const p of paths) {
    const [first, ...rest] = p.split('.');
    const f = elType.fields[first!];
    if (f && !f.repeated) {
      f.resolve();
      if (f.resolvedType instanceof protobuf.Type && f.resolvedType.fullName === '.google.protobuf.Any') {
        if (anyField && anyField !== first) return undefined;
        anyField = first;
        outer.push(first!);
        if (rest.length) inner.push(rest.join('.'));
        continue;
      }
    }
    outer.push(p);
  }
  if (!maskFits(outer, elType)) return undefined;
  const result = trim(el, tree(outer));
  if (anyField && el[anyField] && inner.length > 0) {
    const any = el[anyField] as J;
    const innerType = typeOf(any);
    if (!maskFits(inner, innerType)) return undefined;
    result[anyField] = trim(any, tree(inner), new Set(['@type']));
  }
  return result;
}

export interface DumpQuery {
  resource?: string;
  mask?: string;
  nameRegex?: string;
  includeEds: boolean;
}

/** The whole /config_dump answer body, or an AdminError with Envoy's status and text. */
export function configDump(srv: ServerInstance, q: DumpQuery): J {
  let matcher: Re2 | undefined;
  if (q.nameRegex) {
    try {
      matcher = compileRe2(q.nameRegex);
    } catch (err) {
      throw new AdminError(400, `Error while parsing name_regex from ${q.nameRegex}: ${(err as Error).message}`);
    }
  }
  const match = (name: string) => !matcher || matcher.matchesFully(name);
  // Each dump goes through the Envoy protos: field order, defaults and every nested Any come out canonical.
  const dumps = buildDumps(srv, match, q.includeEds).map((d) => {
    const { '@type': url, ...rest } = d;
    const type = String(url).slice(String(url).lastIndexOf('/') + 1);
    return { '@type': url, ...canonicalize(type, rest) };
  });
  const paths = q.mask ? q.mask.split(',').filter(Boolean) : [];
  if (q.resource) {
    for (const d of dumps) {
      const t = typeOf(d);
      const f = t.fields[q.resource];
      if (!f) continue;
      if (!f.repeated) {
        throw new AdminError(400, `${f.name} is not a repeated field. Use ?mask=${f.name} to get only this field`);
      }
      f.resolve();
      if (!(f.resolvedType instanceof protobuf.Type)) {
        throw new AdminError(400, `${f.name} is not a repeated message field`);
      }
      const elType = f.resolvedType;
      const elUrl = typeUrlOf(elType.fullName);
      const configs = (((d as J)[q.resource] ?? []) as J[]).map((el) => {
        if (paths.length === 0) return { '@type': elUrl, ...el };
        const trimmed = trimResource(el, elType, paths);
        if (!trimmed)
          throw new AdminError(400, `FieldMask paths: "${paths.join('" paths: "')}" could not be successfully used.`);
        return { '@type': elUrl, ...trimmed };
      });
      return { configs };
    }
    throw new AdminError(404, `${q.resource} not found in config dump`);
  }
  if (paths.length > 0) {
    const configs: J[] = [];
    for (const d of dumps) {
      const t = typeOf(d);
      if (!maskFits(paths, t)) continue;
      configs.push({ '@type': d['@type'], ...trim(d, tree(paths)) });
    }
    if (configs.length === 0) {
      throw new AdminError(400, `FieldMask ${q.mask} could not be successfully applied to any configs.`);
    }
    return { configs };
  }
  return { configs: dumps };
}
