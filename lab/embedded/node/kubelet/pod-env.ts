// A container's environment as the kubelet builds it: Service links of the namespace (and the `kubernetes` Service),
// then envFrom (configMapRef, secretRef, with prefix), then env (value with $(VAR) expansion over what came before,
// fieldRef, resourceFieldRef, configMapKeyRef, secretKeyRef). Missing references fail with the message kubelet
// gives, so the container waits in CreateContainerConfigError.
import type { KubeClient } from '../../client/kube-client.ts';
import { expandVars } from './expand.ts';

export class EnvError extends Error {}

export interface PodFacts {
  pod: any;
  podIP: string;
  hostIP: string;
  nodeName: string;
}

/** The Docker-links style variables of a Service (enableServiceLinks). */
export function serviceLinkEnv(svc: any, portShift?: (ip: string, port: number) => number): Record<string, string> {
  const out: Record<string, string> = {};
  const ip = svc.spec?.clusterIP;
  if (!ip || ip === 'None') return out;
  const name = String(svc.metadata.name).toUpperCase().replace(/-/g, '_');
  const ports: any[] = svc.spec?.ports ?? [];
  if (!ports.length) return out;
  const shift = (p: number) => (portShift ? portShift(ip, p) : p);
  out[`${name}_SERVICE_HOST`] = ip;
  out[`${name}_SERVICE_PORT`] = String(shift(ports[0].port));
  for (const p of ports) {
    if (p.name) out[`${name}_SERVICE_PORT_${String(p.name).toUpperCase().replace(/-/g, '_')}`] = String(shift(p.port));
  }
  const first = ports[0];
  const proto = String(first.protocol ?? 'TCP').toLowerCase();
  out[`${name}_PORT`] = `${proto}://${ip}:${shift(first.port)}`;
  for (const p of ports) {
    const pr = String(p.protocol ?? 'TCP');
    const prefix = `${name}_PORT_${shift(p.port)}_${pr.toUpperCase()}`;
    out[prefix] = `${pr.toLowerCase()}://${ip}:${shift(p.port)}`;
    out[`${prefix}_PROTO`] = pr.toLowerCase();
    out[`${prefix}_PORT`] = String(shift(p.port));
    out[`${prefix}_ADDR`] = ip;
  }
  return out;
}

function fieldPathValue(path: string, f: PodFacts): string {
  const pod = f.pod;
  const m =
    /^metadata\.(labels|annotations)\['(.+)'\]$/.exec(path) ?? /^metadata\.(labels|annotations)\["(.+)"\]$/.exec(path);
  if (m) return pod.metadata?.[m[1]]?.[m[2]] ?? '';
  switch (path) {
    case 'metadata.name':
      return pod.metadata.name;
    case 'metadata.namespace':
      return pod.metadata.namespace;
    case 'metadata.uid':
      return pod.metadata.uid;
    case 'spec.nodeName':
      return f.nodeName;
    case 'spec.serviceAccountName':
      return pod.spec?.serviceAccountName ?? 'default';
    case 'status.podIP':
    case 'status.podIPs':
      return f.podIP;
    case 'status.hostIP':
    case 'status.hostIPs':
      return f.hostIP;
    default:
      throw new EnvError(`unsupported fieldRef fieldPath ${JSON.stringify(path)}`);
  }
}

const decode = (b64: string) => Buffer.from(b64, 'base64').toString();

/** Where a container's env reads data: ConfigMaps (values as they are) and Secrets (values base64-decoded). */
interface DataSource {
  /** As the kubelet's "not found" message names it. */
  noun: string;
  kind: string;
  get(name: string): Promise<any | undefined>;
  value(v: unknown): string;
}

/** The data of an envFrom source, decoded; undefined when an optional source is missing. */
async function envFromData(ref: any, src: DataSource): Promise<[string, string][] | undefined> {
  const o = await src.get(ref.name);
  if (!o) {
    if (ref.optional) return undefined;
    throw new EnvError(`${src.noun} "${ref.name}" not found`);
  }
  return Object.entries(o.data ?? {}).map(([k, v]) => [k, src.value(v)]);
}

/** One key of a ConfigMap or Secret (valueFrom), decoded; undefined when an optional one is missing. */
async function keyRefValue(ref: any, src: DataSource, ns: string): Promise<string | undefined> {
  const o = await src.get(ref.name);
  const v = o?.data?.[ref.key];
  if (v === undefined) {
    if (ref.optional) return undefined;
    throw new EnvError(
      o ? `couldn't find key ${ref.key} in ${src.kind} ${ns}/${ref.name}` : `${src.noun} "${ref.name}" not found`,
    );
  }
  return src.value(v);
}

export async function containerEnv(
  client: KubeClient,
  container: any,
  facts: PodFacts,
  base: Record<string, string>,
): Promise<Record<string, string>> {
  const ns = facts.pod.metadata.namespace;
  const env: Record<string, string> = { ...base };
  // Each object is read once per container, however many variables name it.
  const cached = (plural: string) => {
    const seen = new Map<string, any>();
    return async (name: string) => {
      if (!seen.has(name)) seen.set(name, await client.getIfExists(`/api/v1/namespaces/${ns}/${plural}/${name}`));
      return seen.get(name);
    };
  };
  const configMaps: DataSource = { noun: 'configmap', kind: 'ConfigMap', get: cached('configmaps'), value: String };
  const secrets: DataSource = {
    noun: 'secret',
    kind: 'Secret',
    get: cached('secrets'),
    value: (v) => decode(String(v)),
  };
  for (const from of container.envFrom ?? []) {
    const prefix = from.prefix ?? '';
    if (from.configMapRef) {
      const data = await envFromData(from.configMapRef, configMaps);
      if (!data) continue;
      for (const [k, v] of data) env[prefix + k] = v;
    }
    if (from.secretRef) {
      const data = await envFromData(from.secretRef, secrets);
      if (!data) continue;
      for (const [k, v] of data) env[prefix + k] = v;
    }
  }
  for (const e of container.env ?? []) {
    if (e.valueFrom === undefined) {
      env[e.name] = expandVars(String(e.value ?? ''), (n) => (Object.hasOwn(env, n) ? env[n] : undefined));
      continue;
    }
    const vf = e.valueFrom;
    if (vf.fieldRef) env[e.name] = fieldPathValue(vf.fieldRef.fieldPath, facts);
    else if (vf.resourceFieldRef) env[e.name] = resourceValue(container, vf.resourceFieldRef);
    else if (vf.configMapKeyRef || vf.secretKeyRef) {
      const v = vf.configMapKeyRef
        ? await keyRefValue(vf.configMapKeyRef, configMaps, ns)
        : await keyRefValue(vf.secretKeyRef, secrets, ns);
      if (v === undefined) continue;
      env[e.name] = v;
    }
  }
  return env;
}

function resourceValue(container: any, ref: { resource: string; divisor?: string }): string {
  const [kind, res] = ref.resource.split('.');
  const v = container.resources?.[kind]?.[res];
  if (v !== undefined) return String(v);
  // No limit given: the node's capacity, as the kubelet reports it.
  if (res === 'cpu') return '2';
  if (res === 'memory') return String(24 * 1024 * 1024 * 1024);
  return '0';
}
