// The kubelet's Node (pkg/kubelet/kubelet_node_status.go): registered with the API server on start, its status
// (conditions, addresses, capacity, nodeInfo) written again at every heartbeat, and a NodeReady event the first time.
import type { EventRecorder } from '../../client/events.ts';
import { KubeError } from '../../client/kube-client.ts';
import { rfc3339 } from './time.ts';
import type { KubeletOptions } from './types.ts';

export class NodeStatus {
  private readonly opts: KubeletOptions;
  private readonly hostIP: string;
  private readonly events: EventRecorder;
  private readonly since = rfc3339();
  private registered = false;

  constructor(opts: KubeletOptions, hostIP: string, events: EventRecorder) {
    this.opts = opts;
    this.hostIP = hostIP;
    this.events = events;
  }

  /** Creates the Node if it is missing, then writes its status (conditions, addresses, capacity, nodeInfo). */
  async register(): Promise<void> {
    const os = await import('node:os');
    const now = rfc3339();
    const name = this.opts.nodeName;
    const cond = (type: string, status: string, reason: string, message: string) => ({
      type,
      status,
      reason,
      message,
      lastHeartbeatTime: now,
      lastTransitionTime: this.since,
    });
    const capacity = {
      cpu: String(os.availableParallelism()),
      memory: `${Math.floor(os.totalmem() / 1024)}Ki`,
      pods: '250',
      'ephemeral-storage': '100Gi',
    };
    const status = {
      conditions: [
        cond('MemoryPressure', 'False', 'KubeletHasSufficientMemory', 'kubelet has sufficient memory available'),
        cond('DiskPressure', 'False', 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure'),
        cond('PIDPressure', 'False', 'KubeletHasSufficientPID', 'kubelet has sufficient PID available'),
        cond('Ready', 'True', 'KubeletReady', 'kubelet is posting ready status'),
      ],
      addresses: [
        { type: 'InternalIP', address: this.hostIP },
        { type: 'Hostname', address: name },
      ],
      capacity,
      allocatable: capacity,
      nodeInfo: {
        machineID: '',
        systemUUID: '',
        bootID: '',
        kernelVersion: os.release(),
        osImage: `gwlab embedded node (${os.type()})`,
        containerRuntimeVersion: 'gwlab-process://1',
        kubeletVersion: 'v1.32.0-gwlab',
        kubeProxyVersion: 'v1.32.0-gwlab',
        operatingSystem: 'linux',
        architecture: process.arch === 'x64' ? 'amd64' : process.arch,
      },
    };
    const path = `/api/v1/nodes/${name}`;
    let node: any;
    try {
      node = await this.opts.client.request('GET', path);
    } catch (err) {
      if (!(err instanceof KubeError && err.code === 404)) throw err;
      node = await this.opts.client.request('POST', '/api/v1/nodes', {
        apiVersion: 'v1',
        kind: 'Node',
        metadata: {
          name,
          labels: {
            'kubernetes.io/hostname': name,
            'kubernetes.io/os': 'linux',
            'kubernetes.io/arch': status.nodeInfo.architecture,
            'node-role.kubernetes.io/control-plane': '',
          },
        },
        spec: { podCIDR: `127.${this.opts.plan.podOctet}.0.0/16`, podCIDRs: [`127.${this.opts.plan.podOctet}.0.0/16`] },
      });
    }
    const patched = await this.opts.client.request(
      'PATCH',
      `${path}/status`,
      { status },
      'application/merge-patch+json',
    );
    node = patched?.metadata ? patched : node;
    if (!this.registered && node?.metadata) {
      this.registered = true;
      void this.events.record(
        { ...node, kind: 'Node', apiVersion: 'v1' },
        'Normal',
        'NodeReady',
        `Node ${name} status is now: NodeReady`,
      );
    }
  }
}
