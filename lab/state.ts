// Where a lab keeps its state, and which loopback address ranges it owns.
// Layout (interfaces page): ${GWLAB_HOME:-~/.gwlab}/<lab name>/{kubeconfig, pki, store, pods, ...}.
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { homedir } from 'node:os';
import { join } from 'node:path';

export const DEFAULT_LAB_NAME = 'gwlab';
/** At most this many labs can run side by side on one machine: each owns one second octet in four /8 blocks. */
export const MAX_LABS = 60;

export function gwlabHome(): string {
  return process.env.GWLAB_HOME || join(homedir(), '.gwlab');
}

export function assertLabName(name: string): void {
  if (!/^[a-z0-9]([-a-z0-9]{0,40}[a-z0-9])?$/.test(name)) {
    throw new Error(`invalid lab name ${JSON.stringify(name)}: use lowercase letters, digits and '-' (at most 42)`);
  }
}

export interface LabPaths {
  root: string;
  /** Kubeconfig with context `gwlab-<name>` and the admin token. */
  kubeconfig: string;
  /** CA and serving certificates, service-account signing key, admin token. */
  pki: string;
  /** The API server's durable store. */
  store: string;
  /** Per pod: `<pods>/<uid>/volumes/<name>` and `<pods>/<uid>/logs/<container>/<n>.log`. */
  pods: string;
  /** Audit-style request log of the API server (JSON lines). */
  auditLog: string;
  /** Logs of the lab process's own components (JSON lines). */
  labLog: string;
  /** `lab.json`: the running lab's pid, ports, address ranges and backend. */
  labFile: string;
}

export function labPaths(name: string = DEFAULT_LAB_NAME, home: string = gwlabHome()): LabPaths {
  assertLabName(name);
  const root = join(home, name);
  return {
    root,
    kubeconfig: join(root, 'kubeconfig'),
    pki: join(root, 'pki'),
    store: join(root, 'store'),
    pods: join(root, 'pods'),
    auditLog: join(root, 'audit.log'),
    labLog: join(root, 'lab.log'),
    labFile: join(root, 'lab.json'),
  };
}

/**
 * The loopback address plan of lab number `index`. 127.0.0.0/8 is all routed to `lo` on Linux, so every address
 * here can be bound without configuration, and labs never overlap because each owns its own second octet.
 */
export interface AddressPlan {
  index: number;
  /** Pod IPs are 127.<podOctet>.x.y */
  podOctet: number;
  /** ClusterIPs are 127.<serviceOctet>.x.y; `<serviceOctet>.0.1` is Service default/kubernetes. */
  serviceOctet: number;
  /** LoadBalancer ingress IPs are 127.<lbOctet>.x.y */
  lbOctet: number;
  /**
   * Pod loopbacks are 127.<loopOctet>.x.y, one per pod (the x.y of its pod IP): what 127.0.0.1 is inside that pod.
   * Only the pod itself and the kubelet's port-forward reach it (lab/embedded/node/README.md, "Network identity").
   */
  loopOctet: number;
}

export function addressPlan(index: number): AddressPlan {
  if (!Number.isInteger(index) || index < 0 || index >= MAX_LABS) throw new Error(`lab index ${index} out of range`);
  return { index, podOctet: 64 + index, serviceOctet: 128 + index, lbOctet: 192 + index, loopOctet: 4 + index };
}

/** The pod loopback of the pod at `podIP` (127.<podOctet>.x.y → 127.<loopOctet>.x.y). */
export function podLoopback(plan: AddressPlan, podIP: string): string {
  const p = podIP.split('.');
  if (p.length !== 4 || p[0] !== '127' || Number(p[1]) !== plan.podOctet) {
    throw new Error(`${podIP} is not a pod IP of lab ${plan.index} (127.${plan.podOctet}.0.0/16)`);
  }
  return `127.${plan.loopOctet}.${p[2]}.${p[3]}`;
}

export interface LabRecord {
  name: string;
  index: number;
  backend: 'embedded' | 'kind' | 'k3s' | 'existing';
  /** pid of the lab process (embedded backend), absent for other backends. */
  pid?: number;
  apiServerPort?: number;
  startedAt?: string;
  kubeconfig: string;
  /** Embedded: the API server serves, the controllers and the node agent are still starting (cluster.ts). */
  starting?: boolean;
  [extra: string]: unknown;
}

export function readLabRecord(name: string, home: string = gwlabHome()): LabRecord | undefined {
  try {
    return JSON.parse(readFileSync(labPaths(name, home).labFile, 'utf8')) as LabRecord;
  } catch {
    return undefined;
  }
}

export function writeLabRecord(rec: LabRecord, home: string = gwlabHome()): void {
  const p = labPaths(rec.name, home);
  mkdirSync(p.root, { recursive: true });
  writeFileSync(p.labFile, JSON.stringify(rec, null, 2) + '\n');
}

/** Names of the labs that have a state folder under GWLAB_HOME. */
export function listLabs(home: string = gwlabHome()): string[] {
  try {
    return readdirSync(home, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => d.name)
      .sort();
  } catch {
    return [];
  }
}

/** Port of the claim socket: a lab holds 127.<podOctet>.255.254:CLAIM_PORT open while it runs. */
export const CLAIM_PORT = 47999;

/**
 * Claims an address index for a running lab, machine-wide. The claim is a listening socket on an address inside the
 * lab's own pod range, so it is released by the OS when the lab process dies, even by SIGKILL, and labs under
 * different GWLAB_HOMEs (a user's lab and a test's throw-away lab) never get the same addresses. The index the lab had
 * before is preferred, so the same lab name keeps its addresses across restarts when it can.
 */
export async function claimLabIndex(preferred?: number): Promise<{ index: number; release: () => Promise<void> }> {
  const order = [...(preferred !== undefined ? [preferred] : []), ...Array.from({ length: MAX_LABS }, (_, i) => i)];
  for (const index of order) {
    if (index < 0 || index >= MAX_LABS) continue;
    const server = net.createServer();
    const ok = await new Promise<boolean>((resolve) => {
      server.once('error', () => resolve(false));
      server.listen({ host: `127.${addressPlan(index).podOctet}.255.254`, port: CLAIM_PORT, exclusive: true }, () =>
        resolve(true),
      );
    });
    if (ok) {
      server.unref();
      return { index, release: () => new Promise<void>((r) => server.close(() => r())) };
    }
  }
  throw new Error(
    `no free lab address range: ${MAX_LABS} labs are running on this machine; stop one with npm run lab:down`,
  );
}
