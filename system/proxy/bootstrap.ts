// The v3 Bootstrap: read from -c (YAML or JSON), merged with --config-yaml (protobuf MergeFrom semantics),
// the --service-* overrides applied, checked against the Envoy protos and returned as canonical JSON.
import { readFileSync } from 'node:fs';
import YAML from 'yaml';
import { canonicalize, ProtoJsonError } from '../shared/envoy/protojson.ts';
import { validateJson } from '../shared/envoy/validate.ts';

type J = Record<string, any>;

export class BootstrapError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BootstrapError';
  }
}

function parseDoc(text: string, what: string): J {
  let doc: unknown;
  try {
    doc = YAML.parse(text, { intAsBigInt: false, uniqueKeys: true });
  } catch (err) {
    throw new BootstrapError(`unable to parse ${what} as YAML or JSON: ${(err as Error).message}`);
  }
  if (doc === null || doc === undefined) return {};
  if (typeof doc !== 'object' || Array.isArray(doc))
    throw new BootstrapError(`${what}: the bootstrap must be a mapping`);
  return doc as J;
}

/** Protobuf MergeFrom on JSON: scalars replace, messages merge, repeated fields append. Any of another type replaces. */
export function mergeFrom(base: J, over: J): J {
  const out: J = { ...base };
  for (const [k, v] of Object.entries(over)) {
    const cur = out[k];
    if (Array.isArray(v) && Array.isArray(cur)) out[k] = [...cur, ...v];
    else if (isObject(v) && isObject(cur) && (v['@type'] === undefined || v['@type'] === cur['@type']))
      out[k] = mergeFrom(cur, v);
    else out[k] = v;
  }
  return out;
}

function isObject(v: unknown): v is J {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

export interface BootstrapSource {
  configPath?: string;
  configYaml?: string;
  serviceNode?: string;
  serviceCluster?: string;
  serviceZone?: string;
}

export function loadBootstrap(src: BootstrapSource): J {
  let doc: J = {};
  const what = src.configPath ? `'${src.configPath}'` : '--config-yaml';
  if (src.configPath) {
    let text: string;
    try {
      text = readFileSync(src.configPath, 'utf8');
    } catch (err) {
      throw new BootstrapError(
        `Invalid path: ${src.configPath} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
      );
    }
    doc = parseDoc(text, src.configPath);
  }
  if (src.configYaml) doc = mergeFrom(doc, parseDoc(src.configYaml, '--config-yaml'));
  if (src.serviceNode || src.serviceCluster || src.serviceZone) {
    const node: J = { ...(doc.node ?? {}) };
    if (src.serviceNode) node.id = src.serviceNode;
    if (src.serviceCluster) node.cluster = src.serviceCluster;
    if (src.serviceZone) node.locality = { ...(node.locality ?? {}), zone: src.serviceZone };
    doc = { ...doc, node };
  }
  let bootstrap: J;
  try {
    bootstrap = canonicalize('envoy.config.bootstrap.v3.Bootstrap', doc);
  } catch (err) {
    if (err instanceof ProtoJsonError) {
      throw new BootstrapError(
        `error initializing configuration ${what}: Protobuf message (type envoy.config.bootstrap.v3.Bootstrap) is invalid at ${err.path || '<root>'}: ${err.problem}`,
      );
    }
    throw err;
  }
  const bad = validateJson('envoy.config.bootstrap.v3.Bootstrap', bootstrap);
  if (bad) {
    throw new BootstrapError(
      `error initializing configuration ${what}: Proto constraint validation failed (${bad.chain}) at ${bad.path}`,
    );
  }
  const dyn = bootstrap.dynamic_resources as J | undefined;
  if (dyn && (dyn.ads_config || dyn.cds_config || dyn.lds_config)) {
    if (!bootstrap.node?.id || !bootstrap.node?.cluster) {
      throw new BootstrapError(
        "error initializing configuration: node 'id' and 'cluster' are required for xDS. Set it either in 'node' config or via --service-node and --service-cluster options.",
      );
    }
    for (const key of ['cds_config', 'lds_config'] as const) {
      const s = dyn[key] as J | undefined;
      if (s && !s.ads) {
        throw new BootstrapError(`dynamic_resources.${key}: only ADS config sources ({ads: {}}) are supported`);
      }
    }
    if ((dyn.cds_config || dyn.lds_config) && !dyn.ads_config) {
      throw new BootstrapError('dynamic_resources: cds_config/lds_config use ADS but ads_config is missing');
    }
    const api = dyn.ads_config?.api_type;
    if (dyn.ads_config && api !== 'GRPC' && api !== 'DELTA_GRPC' && api !== undefined) {
      throw new BootstrapError(`dynamic_resources.ads_config.api_type ${api} is not supported (GRPC or DELTA_GRPC)`);
    }
  }
  return bootstrap;
}
