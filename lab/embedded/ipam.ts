// Address allocation inside one lab's loopback ranges (lab/state.ts addressPlan): pod IPs, ClusterIPs and
// LoadBalancer IPs. 127.<octet>.0.0/16 gives 65k addresses per range; .0 and .255 last octets are skipped for
// readability, and callers reserve the well-known ones (ClusterIP .0.1 = kubernetes, .0.10 = cluster DNS).
// The kubelet (pod IPs), the LoadBalancer controller (LoadBalancer IPs) and the node agent (well-known addresses,
// low ports) share it.
import type { AddressPlan } from '../state.ts';

export class AddressPool {
  readonly octet: number;
  private readonly used = new Set<string>();
  private cursor = 0;

  constructor(octet: number, reserved: string[] = []) {
    this.octet = octet;
    for (const r of reserved) this.used.add(r);
    // The lab's claim socket lives at 127.<podOctet>.255.254.
    this.used.add(`127.${octet}.255.254`);
  }

  private nth(i: number): string {
    return `127.${this.octet}.${Math.floor(i / 254)}.${(i % 254) + 1}`;
  }

  /** Marks an address taken (e.g. one read back from the store after a restart). */
  claim(ip: string): boolean {
    if (!this.contains(ip) || this.used.has(ip)) return false;
    this.used.add(ip);
    return true;
  }

  contains(ip: string): boolean {
    return ip.startsWith(`127.${this.octet}.`);
  }

  allocate(): string {
    const size = 256 * 254;
    for (let n = 0; n < size; n++) {
      const i = (this.cursor + n) % size;
      const ip = this.nth(i);
      if (!this.used.has(ip)) {
        this.used.add(ip);
        this.cursor = i + 1;
        return ip;
      }
    }
    throw new Error(`address range 127.${this.octet}.0.0/16 is full`);
  }

  release(ip: string): void {
    this.used.delete(ip);
  }
}

/** Well-known addresses of a lab's service range. */
export function wellKnownServiceIPs(plan: AddressPlan): { kubernetes: string; dns: string } {
  return { kubernetes: `127.${plan.serviceOctet}.0.1`, dns: `127.${plan.serviceOctet}.0.10` };
}

/**
 * Whether this process may bind ports below 1024 on loopback (root, CAP_NET_BIND_SERVICE or a lowered
 * net.ipv4.ip_unprivileged_port_start). When it cannot, the lab shifts such ports by 8000 in pods and services.
 */
export async function canBindLowPorts(address = '127.0.0.1'): Promise<boolean> {
  const net = await import('node:net');
  for (const port of [1, 7, 9, 13]) {
    const ok = await new Promise<NodeJS.ErrnoException | null>((resolve) => {
      const s = net.createServer();
      s.once('error', (e: NodeJS.ErrnoException) => resolve(e));
      s.listen({ host: address, port, exclusive: true }, () => s.close(() => resolve(null)));
    });
    if (ok === null) return true;
    if (ok.code === 'EACCES' || ok.code === 'EPERM') return false;
    // EADDRINUSE: someone holds that port; try another
  }
  return false;
}
