// What the debug tools read besides the Kubernetes API: the control plane's admin server and each gateway proxy's
// admin, reached by port-forward exactly as a user would (contract 4.1/4.2). Every session is closed by the helper
// that opened it, so a tool never leaves a forward behind.
import {
  type AdminSession,
  adminSession,
  CONTROL_PLANE,
  controlPlaneSelector,
  GATEWAY_NAME_LABEL,
  PROXY_ADMIN_PORT,
} from '../toolkit/admin.ts';
import type { KObj, Kube } from '../toolkit/kube.ts';
import { isPodReady, portForward } from '../toolkit/portforward.ts';

export const GW_API = 'gateway.networking.k8s.io/v1';
export const VENDOR_API = 'gateway.gwvendor.dev/v1alpha1';
export const CONTROLLER_NAME = 'gateway.gwvendor.dev/gwvendor';

export interface ProxyPod {
  gateway: { namespace: string; name: string };
  pod: string;
  /** Running and Ready: only such a pod can be port-forwarded to. */
  ready: boolean;
  /** The pod object as listed (phase, container statuses), for reports about pods that do not run. */
  object: KObj;
}

/**
 * Every proxy pod (label gateway.networking.k8s.io/gateway-name) in the given namespaces, or in all namespaces,
 * sorted by Gateway then pod name.
 */
export async function listProxyPods(kube: Kube, namespaces?: string[]): Promise<ProxyPod[]> {
  const lists = namespaces
    ? await Promise.all(namespaces.map((n) => kube.list('v1', 'Pod', n, GATEWAY_NAME_LABEL)))
    : [await kube.list('v1', 'Pod', undefined, GATEWAY_NAME_LABEL)];
  return lists
    .flat()
    .map((p) => ({
      gateway: { namespace: p.metadata!.namespace!, name: p.metadata!.labels![GATEWAY_NAME_LABEL] },
      pod: p.metadata!.name!,
      ready: isPodReady(p as never),
      object: p,
    }))
    .sort(
      (a, b) =>
        a.gateway.namespace.localeCompare(b.gateway.namespace) ||
        a.gateway.name.localeCompare(b.gateway.name) ||
        a.pod.localeCompare(b.pod),
    );
}

/** Opens the admin (19000) of one proxy pod, runs `fn`, and closes the forward whatever happens. */
export async function withProxyAdmin<T>(kube: Kube, p: ProxyPod, fn: (a: AdminSession) => Promise<T>): Promise<T> {
  const fwd = await portForward(kube.kc, { namespace: p.gateway.namespace, pod: p.pod, port: PROXY_ADMIN_PORT });
  const admin = adminSession(fwd, `proxy admin of Gateway ${p.gateway.namespace}/${p.gateway.name} (${p.pod})`);
  try {
    return await fn(admin);
  } finally {
    await admin.close();
  }
}

/** Opens the control plane's admin (9095), runs `fn`, and closes the forward whatever happens. */
export async function withControlPlaneAdmin<T>(kube: Kube, fn: (a: AdminSession) => Promise<T>): Promise<T> {
  const fwd = await portForward(kube.kc, {
    namespace: CONTROL_PLANE.namespace,
    labelSelector: await controlPlaneSelector(kube),
    port: CONTROL_PLANE.adminPort,
  });
  const admin = adminSession(fwd, `control plane admin (${fwd.pod})`);
  try {
    return await fn(admin);
  } finally {
    await admin.close();
  }
}

/** Runs `fn` over items with at most `limit` at a time, keeping the input order in the result. */
export async function mapLimit<T, R>(items: T[], limit: number, fn: (t: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}
