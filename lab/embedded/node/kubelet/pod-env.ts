// A container's environment as the kubelet builds it: Service links of the namespace (and the `kubernetes` Service),
// then envFrom (configMapRef, secretRef, with prefix), then env (value with $(VAR) expansion over what came before,
// fieldRef, resourceFieldRef, configMapKeyRef, secretKeyRef). Missing references fail with the message kubelet
// gives, so the container waits in CreateContainerConfigError.
import type { KubeClient } from '../../client/kube-client.ts';
import { KubeError } from '../../client/kube-client.ts';
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

async function getOptional(client: KubeClient, path: string): Promise<any | undefined> {
  try {
    return await client.request('GET', path);
  } catch (err) {
    if (err instanceof KubeError && err.code === 404) return undefined;
    throw err;
  }
}

const decode = (b64: string) => Buffer.from(b64, 'base64').toString();

export async function containerEnv(
  client: KubeClient,
  container: any,
  facts: PodFacts,
  base: Record<string, string>,
): Promise<Record<string, string>> {
  const ns = facts.pod.metadata.namespace;
  const env: Record<string, string> = { ...base };
  const cms = new Map<string, any>();
  const secrets = new Map<string, any>();
  const cm = async (name: string) => {
    if (!cms.has(name)) cms.set(name, await getOptional(client, `/api/v1/namespaces/${ns}/configmaps/${name}`));
    return cms.get(name);
  };
  const secret = async (name: string) => {
    if (!secrets.has(name)) secrets.set(name, await getOptional(client, `/api/v1/namespaces/${ns}/secrets/${name}`));
    return secrets.get(name);
  };
  for (const from of container.envFrom ?? []) {
    const prefix = from.prefix ?? '';
    if (from.configMapRef) {
      const o = await cm(from.configMapRef.name);
      if (!o) {
        if (from.configMapRef.optional) continue;
        throw new EnvError(`configmap "${from.configMapRef.name}" not found`);
      }
      for (const [k, v] of Object.entries(o.data ?? {})) env[prefix + k] = String(v);
    }
    if (from.secretRef) {
      const o = await secret(from.secretRef.name);
      if (!o) {
        if (from.secretRef.optional) continue;
        throw new EnvError(`secret "${from.secretRef.name}" not found`);
      }
      for (const [k, v] of Object.entries(o.data ?? {})) env[prefix + k] = decode(String(v));
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
    else if (vf.configMapKeyRef) {
      const ref = vf.configMapKeyRef;
      const o = await cm(ref.name);
      const v = o?.data?.[ref.key];
      if (v === undefined) {
        if (ref.optional) continue;
        throw new EnvError(
          o ? `couldn't find key ${ref.key} in ConfigMap ${ns}/${ref.name}` : `configmap "${ref.name}" not found`,
        );
      }
      env[e.name] = String(v);
    } else if (vf.secretKeyRef) {
      const ref = vf.secretKeyRef;
      const o = await secret(ref.name);
      const v = o?.data?.[ref.key];
      if (v === undefined) {
        if (ref.optional) continue;
        throw new EnvError(
          o ? `couldn't find key ${ref.key} in Secret ${ns}/${ref.name}` : `secret "${ref.name}" not found`,
        );
      }
      env[e.name] = decode(String(v));
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
