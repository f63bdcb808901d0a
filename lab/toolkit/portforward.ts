// Port-forward from a local TCP port to a pod port through the Kubernetes API (pods/portforward), the way
// `kubectl port-forward` does, with @kubernetes/client-node. Works on every backend because it only needs the API.
import net from 'node:net';
import { CoreV1Api, type KubeConfig, PortForward as KubePortForward, type V1Pod } from '@kubernetes/client-node';

export interface PortForwardTarget {
  namespace: string;
  /** A pod by name; or pick a Running and Ready pod with `labelSelector`. */
  pod?: string;
  labelSelector?: string;
  /** The container port to reach. */
  port: number;
  /** Local port; 0 (default) picks a free one. */
  localPort?: number;
  /** Local address to listen on (default 127.0.0.1). */
  address?: string;
}

export interface PortForward {
  localPort: number;
  /** `http://127.0.0.1:<localPort>` */
  url: string;
  pod: string;
  /** Connections forwarded so far (each is one pods/portforward stream). */
  readonly connections: number;
  close(): Promise<void>;
}

export function isPodReady(p: V1Pod): boolean {
  return (
    p.status?.phase === 'Running' &&
    !p.metadata?.deletionTimestamp &&
    (p.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True')
  );
}

/** The newest Running and Ready pod matching a selector, or an error saying what was found instead. */
export async function readyPod(kc: KubeConfig, namespace: string, labelSelector: string): Promise<string> {
  const core = kc.makeApiClient(CoreV1Api);
  const pods = (await core.listNamespacedPod({ namespace, labelSelector })).items;
  const ready = pods
    .filter(isPodReady)
    .sort((a, b) =>
      String(b.metadata?.creationTimestamp ?? '').localeCompare(String(a.metadata?.creationTimestamp ?? '')),
    );
  if (ready[0]?.metadata?.name) return ready[0].metadata.name;
  const seen = pods.map((p) => `${p.metadata?.name} (${p.status?.phase ?? 'no phase'})`).join(', ') || 'no pods';
  throw new Error(
    `no Running and Ready pod in namespace ${namespace} matches ${labelSelector} (found: ${seen}); ` +
      `run: kubectl -n ${namespace} get pods -l ${labelSelector}`,
  );
}

export async function portForward(kc: KubeConfig, t: PortForwardTarget): Promise<PortForward> {
  let pod = t.pod;
  if (!pod) {
    if (!t.labelSelector) throw new Error('portForward: give a pod or a labelSelector');
    pod = await readyPod(kc, t.namespace, t.labelSelector);
  }
  const podName = pod;
  const forwarder = new KubePortForward(kc, true);
  const sockets = new Set<net.Socket>();
  let connections = 0;
  const server = net.createServer((sock) => {
    connections++;
    sockets.add(sock);
    sock.on('close', () => sockets.delete(sock));
    // A connection that cannot be forwarded (pod gone, port closed) is closed, as kubectl does for that connection.
    sock.on('error', () => sock.destroy());
    forwarder
      .portForward(t.namespace, podName, [t.port], sock, null, sock)
      .then((ws) => {
        const socket = typeof ws === 'function' ? ws() : ws;
        sock.on('close', () => socket?.close());
        socket?.on('close', () => sock.end());
      })
      .catch(() => sock.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(t.localPort ?? 0, t.address ?? '127.0.0.1', () => resolve());
  });
  const localPort = (server.address() as net.AddressInfo).port;
  return {
    localPort,
    url: `http://${t.address ?? '127.0.0.1'}:${localPort}`,
    pod: podName,
    get connections() {
      return connections;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
