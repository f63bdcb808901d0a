// Server-side printing (`Accept: application/json;as=Table;v=v1;g=meta.k8s.io`): the columns kubectl shows for each
// built-in kind, computed as Kubernetes' printers do (pkg/printers/internalversion), and CRD printer columns.
import {
  formatLabelSelector,
  type LabelSelector,
  labelSelectorRequirements,
  SelectorError,
} from '../../../system/shared/selectors.ts';
import type { K8sObject } from './store.ts';

export interface Column {
  name: string;
  type: string;
  format: string;
  description: string;
  priority: number;
}
export interface TableSpec {
  columns: Column[];
  cells(obj: K8sObject, now: number): unknown[];
}

const col = (name: string, type = 'string', priority = 0, format = '', description = ''): Column => ({
  name,
  type,
  format,
  description: description || name,
  priority,
});
const NAME = col('Name', 'string', 0, 'name', 'Name must be unique within a namespace.');
const AGE = col(
  'Age',
  'string',
  0,
  '',
  'CreationTimestamp is a timestamp representing the server time when this object was created.',
);

/** Kubernetes' duration.HumanDuration. */
export function humanDuration(ms: number): string {
  const s = Math.floor(ms / 1000);
  if (s < -1) return '<invalid>';
  if (s < 0) return '0s';
  if (s < 60 * 2) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 10) {
    const rs = s % 60;
    return rs === 0 ? `${m}m` : `${m}m${rs}s`;
  }
  if (m < 60 * 3) return `${m}m`;
  const h = Math.floor(s / 3600);
  if (h < 8) {
    const rm = m % 60;
    return rm === 0 ? `${h}h` : `${h}h${rm}m`;
  }
  if (h < 48) return `${h}h`;
  if (h < 24 * 8) {
    const rh = h % 24;
    return rh === 0 ? `${Math.floor(h / 24)}d` : `${Math.floor(h / 24)}d${rh}h`;
  }
  if (h < 24 * 365 * 2) return `${Math.floor(h / 24)}d`;
  if (h < 24 * 365 * 8) {
    const dy = Math.floor(h / 24) % 365;
    return dy === 0 ? `${Math.floor(h / 24 / 365)}y` : `${Math.floor(h / 24 / 365)}y${dy}d`;
  }
  return `${Math.floor(h / 24 / 365)}y`;
}

export function age(ts: string | undefined, now: number): string {
  if (!ts) return '<unknown>';
  return humanDuration(now - Date.parse(ts));
}

/**
 * metav1.FormatLabelSelector (the Selector column of Deployments and ReplicaSets): the selector's text as
 * apimachinery's Selector.String() writes it (requirements sorted by key), `<none>` when it has none, `<error>` when
 * it does not convert (an unknown operator).
 */
function selectorString(sel: LabelSelector | undefined): string {
  try {
    return formatLabelSelector(labelSelectorRequirements(sel) ?? []) || '<none>';
  } catch (e) {
    if (e instanceof SelectorError) return '<error>';
    throw e;
  }
}

/** labels.FormatLabels (a Service's Selector column): its `spec.selector` map as `k=v`, sorted by key; or `<none>`. */
function mapSelector(m: Record<string, string> | undefined): string {
  return formatLabelSelector(Object.entries(m ?? {}).map(([key, value]) => ({ key, op: '=', value }))) || '<none>';
}

/** The columns a workload (Deployment, ReplicaSet) ends with, wide ones last, as Kubernetes' printers lay them out. */
const WORKLOAD_TAIL = [AGE, col('Containers', 'string', 1), col('Images', 'string', 1), col('Selector', 'string', 1)];

/** The cells of WORKLOAD_TAIL: age, the pod template's container names and images, the selector. */
function workloadTailCells(o: K8sObject, now: number): unknown[] {
  const cs = o.spec?.template?.spec?.containers ?? [];
  return [
    age(o.metadata.creationTimestamp, now),
    cs.map((c: any) => c.name).join(','),
    cs.map((c: any) => c.image).join(','),
    selectorString(o.spec?.selector),
  ];
}

/** A workload's table (Deployment, ReplicaSet): its name, its own counts (column and cell), then WORKLOAD_TAIL. */
function workloadTable(counts: [Column, (o: K8sObject) => unknown][]): TableSpec {
  return {
    columns: [NAME, ...counts.map(([c]) => c), ...WORKLOAD_TAIL],
    cells: (o, now) => [o.metadata.name, ...counts.map(([, cell]) => cell(o)), ...workloadTailCells(o, now)],
  };
}

/** A table of the object's name, its own columns (column and cell each), then its age: most of kubectl's printers. */
function namedTable(own: [Column, (o: K8sObject) => unknown][]): TableSpec {
  return {
    columns: [NAME, ...own.map(([c]) => c), AGE],
    cells: (o, now) => [o.metadata.name, ...own.map(([, cell]) => cell(o)), age(o.metadata.creationTimestamp, now)],
  };
}

/** The pod STATUS column, as kubectl's printPod computes it. */
export function podStatus(pod: K8sObject): {
  reason: string;
  ready: number;
  total: number;
  restarts: number;
  lastRestart?: string;
} {
  const spec = pod.spec ?? {};
  const st = pod.status ?? {};
  let restarts = 0;
  let lastRestart: string | undefined;
  const total = (spec.containers ?? []).length;
  let ready = 0;
  let reason: string = st.reason || st.phase || 'Pending';

  const sidecars = new Set(
    (spec.initContainers ?? []).filter((c: any) => c.restartPolicy === 'Always').map((c: any) => c.name),
  );
  let initializing = false;
  const initStatuses: any[] = st.initContainerStatuses ?? [];
  initStatuses.forEach((c, i) => {
    restarts += c.restartCount ?? 0;
    const lt = c.lastState?.terminated?.finishedAt;
    if (lt && (!lastRestart || lt > lastRestart)) lastRestart = lt;
    if (initializing) return;
    const t = c.state?.terminated;
    if (t && t.exitCode === 0) return;
    if (sidecars.has(c.name) && c.started) return;
    if (t) {
      reason = t.reason ? `Init:${t.reason}` : t.signal ? `Init:Signal:${t.signal}` : `Init:ExitCode:${t.exitCode}`;
      initializing = true;
    } else if (c.state?.waiting?.reason && c.state.waiting.reason !== 'PodInitializing') {
      reason = `Init:${c.state.waiting.reason}`;
      initializing = true;
    } else {
      reason = `Init:${i}/${(spec.initContainers ?? []).length}`;
      initializing = true;
    }
  });
  if (!initializing || sidecars.size > 0) {
    restarts = initializing ? restarts : 0;
    if (!initializing) {
      for (const c of initStatuses) restarts += sidecars.has(c.name) ? (c.restartCount ?? 0) : 0;
    }
    let hasRunning = false;
    const statuses: any[] = st.containerStatuses ?? [];
    for (let i = statuses.length - 1; i >= 0; i--) {
      const c = statuses[i];
      restarts += c.restartCount ?? 0;
      const lt = c.lastState?.terminated?.finishedAt;
      if (lt && (!lastRestart || lt > lastRestart)) lastRestart = lt;
      if (initializing) continue;
      if (c.state?.waiting?.reason) reason = c.state.waiting.reason;
      else if (c.state?.terminated?.reason) reason = c.state.terminated.reason;
      else if (c.state?.terminated) {
        const t = c.state.terminated;
        reason = t.signal ? `Signal:${t.signal}` : `ExitCode:${t.exitCode}`;
      } else if (c.ready && c.state?.running) {
        hasRunning = true;
        ready++;
      }
    }
    if (!initializing && reason === 'Completed' && hasRunning) {
      const readyCond = (st.conditions ?? []).find((c: any) => c.type === 'Ready');
      reason = readyCond?.status === 'True' ? 'Running' : 'NotReady';
    }
  }
  if (pod.metadata.deletionTimestamp && st.reason === 'NodeLost') reason = 'Unknown';
  else if (pod.metadata.deletionTimestamp && !initializing) reason = 'Terminating';
  return { reason, ready, total: total + sidecars.size, restarts, lastRestart };
}

function podCells(p: K8sObject, now: number): unknown[] {
  const s = podStatus(p);
  const restarts = s.lastRestart ? `${s.restarts} (${age(s.lastRestart, now)} ago)` : String(s.restarts);
  const gates = p.spec?.readinessGates ?? [];
  const gatesTrue = gates.filter((g: any) =>
    (p.status?.conditions ?? []).some((c: any) => c.type === g.conditionType && c.status === 'True'),
  ).length;
  return [
    p.metadata.name,
    `${s.ready}/${s.total}`,
    s.reason,
    restarts,
    age(p.metadata.creationTimestamp, now),
    p.status?.podIP || '<none>',
    p.spec?.nodeName || '<none>',
    p.status?.nominatedNodeName || '<none>',
    gates.length ? `${gatesTrue}/${gates.length}` : '<none>',
  ];
}

function serviceExternalIp(s: K8sObject): string {
  const type = s.spec?.type ?? 'ClusterIP';
  const ext: string[] = s.spec?.externalIPs ?? [];
  if (type === 'ClusterIP' || type === 'NodePort') return ext.length ? ext.join(',') : '<none>';
  if (type === 'ExternalName') return s.spec?.externalName ?? '<none>';
  const ing: any[] = s.status?.loadBalancer?.ingress ?? [];
  const ips = [...ing.map((i) => i.ip || i.hostname).filter(Boolean), ...ext];
  return ips.length ? ips.join(',') : '<pending>';
}

function servicePorts(s: K8sObject): string {
  const ports: any[] = s.spec?.ports ?? [];
  if (!ports.length) return '<none>';
  return ports.map((p) => `${p.port}${p.nodePort ? `:${p.nodePort}` : ''}/${p.protocol ?? 'TCP'}`).join(',');
}

function nodeStatus(n: K8sObject): string {
  const ready = (n.status?.conditions ?? []).find((c: any) => c.type === 'Ready');
  const parts = [ready ? (ready.status === 'True' ? 'Ready' : 'NotReady') : 'Unknown'];
  if (n.spec?.unschedulable) parts.push('SchedulingDisabled');
  return parts.join(',');
}

function nodeRoles(n: K8sObject): string {
  const roles: string[] = [];
  for (const k of Object.keys(n.metadata.labels ?? {})) {
    if (k.startsWith('node-role.kubernetes.io/')) roles.push(k.slice('node-role.kubernetes.io/'.length));
    else if (k === 'kubernetes.io/role') roles.push(n.metadata.labels![k]);
  }
  return roles.filter(Boolean).sort().join(',') || '<none>';
}

function nodeAddr(n: K8sObject, type: string): string {
  return (n.status?.addresses ?? []).find((a: any) => a.type === type)?.address ?? '<none>';
}

function endpointsString(subsets: any[] | undefined): string {
  const out: string[] = [];
  let count = 0;
  for (const s of subsets ?? []) {
    for (const a of s.addresses ?? []) {
      for (const p of s.ports?.length ? s.ports : [undefined]) {
        count++;
        if (out.length < 3) out.push(p ? `${a.ip}:${p.port}` : a.ip);
      }
    }
  }
  if (!out.length) return '<none>';
  return count > 3 ? `${out.join(',')} + ${count - 3} more...` : out.join(',');
}

/** An EndpointSlice's PORTS column: its ports' numbers, or `<unset>`. */
function endpointSlicePorts(e: K8sObject): string {
  const ports = (e.ports ?? []).map((p: any) => p.port).filter((p: any) => p !== undefined);
  return ports.length ? ports.join(',') : '<unset>';
}

/** An EndpointSlice's ENDPOINTS column: the first three addresses and how many more, or `<unset>`. */
function endpointSliceAddresses(e: K8sObject): string {
  const addrs = (e.endpoints ?? []).flatMap((x: any) => x.addresses ?? []);
  const shown = addrs.slice(0, 3).join(',');
  if (!addrs.length) return '<unset>';
  return addrs.length > 3 ? `${shown} + ${addrs.length - 3} more...` : shown;
}

function eventObject(e: K8sObject): string {
  const io = e.involvedObject ?? e.regarding ?? {};
  return `${String(io.kind ?? '').toLowerCase()}/${io.name ?? ''}`;
}

function eventLastSeen(e: K8sObject, now: number): string {
  const ts = e.series?.lastObservedTime ?? e.lastTimestamp ?? e.eventTime ?? e.metadata.creationTimestamp;
  return age(ts, now);
}

/** Roles, ClusterRoles and CRDs: Name and Created At. */
const CREATED_AT_TABLE: TableSpec = {
  columns: [NAME, col('Created At', 'date')],
  cells: (r) => [r.metadata.name, r.metadata.creationTimestamp],
};

/** RoleBindings and ClusterRoleBindings: the role, then the subjects by kind (wide). */
const BINDING_TABLE: TableSpec = {
  columns: [
    NAME,
    col('Role', 'string'),
    AGE,
    col('Users', 'string', 1),
    col('Groups', 'string', 1),
    col('ServiceAccounts', 'string', 1),
  ],
  cells: bindingCells,
};

export const builtinTables: Record<string, TableSpec> = {
  pods: {
    columns: [
      NAME,
      col('Ready', 'string', 0, '', 'The aggregate readiness state of this pod for accepting traffic.'),
      col('Status', 'string', 0, '', 'The aggregate status of the containers in this pod.'),
      col(
        'Restarts',
        'string',
        0,
        '',
        'The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.',
      ),
      AGE,
      col('IP', 'string', 1, '', 'IP address allocated to the pod.'),
      col('Node', 'string', 1, '', 'Name of the node this pod is assigned to.'),
      col('Nominated Node', 'string', 1),
      col('Readiness Gates', 'string', 1),
    ],
    cells: podCells,
  },
  deployments: workloadTable([
    [
      col('Ready', 'string', 0, '', 'Number of the pod with ready state'),
      (d) => `${d.status?.readyReplicas ?? 0}/${d.spec?.replicas ?? 1}`,
    ],
    [
      col(
        'Up-to-date',
        'integer',
        0,
        '',
        'Total number of non-terminated pods targeted by this deployment that have the desired template spec.',
      ),
      (d) => d.status?.updatedReplicas ?? 0,
    ],
    [
      col(
        'Available',
        'integer',
        0,
        '',
        'Total number of available pods (ready for at least minReadySeconds) targeted by this deployment.',
      ),
      (d) => d.status?.availableReplicas ?? 0,
    ],
  ]),
  replicasets: workloadTable([
    [col('Desired', 'integer', 0, '', 'Number of desired pods.'), (r) => r.spec?.replicas ?? 1],
    [col('Current', 'integer', 0, '', 'Number of actual replicas.'), (r) => r.status?.replicas ?? 0],
    [col('Ready', 'integer', 0, '', 'Number of ready replicas.'), (r) => r.status?.readyReplicas ?? 0],
  ]),
  services: {
    columns: [
      NAME,
      col('Type', 'string', 0, '', 'The type of the service.'),
      col('Cluster-IP', 'string', 0, '', 'The cluster IP of the service.'),
      col('External-IP', 'string', 0, '', 'The external IP of the service.'),
      col('Port(s)', 'string', 0, '', 'The ports of the service.'),
      AGE,
      col('Selector', 'string', 1),
    ],
    cells: (s, now) => [
      s.metadata.name,
      s.spec?.type ?? 'ClusterIP',
      s.spec?.clusterIP || '<none>',
      serviceExternalIp(s),
      servicePorts(s),
      age(s.metadata.creationTimestamp, now),
      mapSelector(s.spec?.selector),
    ],
  },
  nodes: {
    columns: [
      NAME,
      col('Status', 'string', 0, '', 'The status of the node'),
      col('Roles', 'string', 0, '', 'The roles of the node'),
      AGE,
      col('Version', 'string', 0, '', 'Kubelet Version reported by the node.'),
      col('Internal-IP', 'string', 1),
      col('External-IP', 'string', 1),
      col('OS-Image', 'string', 1),
      col('Kernel-Version', 'string', 1),
      col('Container-Runtime', 'string', 1),
    ],
    cells: (n, now) => [
      n.metadata.name,
      nodeStatus(n),
      nodeRoles(n),
      age(n.metadata.creationTimestamp, now),
      n.status?.nodeInfo?.kubeletVersion ?? '',
      nodeAddr(n, 'InternalIP'),
      nodeAddr(n, 'ExternalIP'),
      n.status?.nodeInfo?.osImage ?? '<unknown>',
      n.status?.nodeInfo?.kernelVersion ?? '<unknown>',
      n.status?.nodeInfo?.containerRuntimeVersion ?? '<unknown>',
    ],
  },
  namespaces: namedTable([
    [col('Status', 'string', 0, '', 'The status of the namespace'), (n) => n.status?.phase ?? 'Active'],
  ]),
  configmaps: namedTable([
    [col('Data', 'string'), (c) => Object.keys(c.data ?? {}).length + Object.keys(c.binaryData ?? {}).length],
  ]),
  secrets: namedTable([
    [col('Type', 'string'), (s) => s.type ?? 'Opaque'],
    [col('Data', 'string'), (s) => Object.keys(s.data ?? {}).length],
  ]),
  serviceaccounts: namedTable([[col('Secrets', 'string'), (s) => (s.secrets ?? []).length]]),
  endpoints: namedTable([[col('Endpoints', 'string'), (e) => endpointsString(e.subsets)]]),
  endpointslices: namedTable([
    [col('AddressType', 'string'), (e) => e.addressType ?? ''],
    [col('Ports', 'string'), endpointSlicePorts],
    [col('Endpoints', 'string'), endpointSliceAddresses],
  ]),
  events: {
    columns: [
      col('Last Seen', 'string'),
      col('Type', 'string'),
      col('Reason', 'string'),
      col('Object', 'string'),
      col('Subobject', 'string', 1),
      col('Source', 'string', 1),
      col('Message', 'string'),
      col('First Seen', 'string', 1),
      col('Count', 'string', 1),
      col('Name', 'string', 1),
    ],
    cells: (e, now) => [
      eventLastSeen(e, now),
      e.type ?? '',
      e.reason ?? '',
      eventObject(e),
      e.involvedObject?.fieldPath ?? '',
      [e.source?.component ?? e.reportingComponent, e.source?.host].filter(Boolean).join(', '),
      e.message ?? '',
      age(e.firstTimestamp ?? e.eventTime ?? e.metadata.creationTimestamp, now),
      e.series?.count ?? e.count ?? 1,
      e.metadata.name,
    ],
  },
  leases: namedTable([[col('Holder', 'string'), (l) => l.spec?.holderIdentity ?? '']]),
  roles: CREATED_AT_TABLE,
  clusterroles: CREATED_AT_TABLE,
  rolebindings: BINDING_TABLE,
  clusterrolebindings: BINDING_TABLE,
  customresourcedefinitions: CREATED_AT_TABLE,
  // pkg/printers/internalversion printValidatingAdmissionPolicy / printValidatingAdmissionPolicyBinding.
  validatingadmissionpolicies: namedTable([
    [
      col(
        'Validations',
        'integer',
        0,
        '',
        'Validations indicates the number of validation rules defined in this configuration',
      ),
      (p) => (p.spec?.validations ?? []).length,
    ],
    [
      col('ParamKind', 'string', 0, '', 'ParamKind specifies the kind of resources used to parameterize this policy'),
      (p) => (p.spec?.paramKind ? `${p.spec.paramKind.apiVersion}/${p.spec.paramKind.kind}` : '<unset>'),
    ],
  ]),
  validatingadmissionpolicybindings: namedTable([
    [
      col(
        'PolicyName',
        'string',
        0,
        '',
        'PolicyName indicates the policy definition which the policy binding binded to',
      ),
      (b) => b.spec?.policyName ?? '',
    ],
    [
      col('ParamRef', 'string', 0, '', 'ParamRef indicates the param resource which sets the configration param'),
      (b) => paramRefCell(b.spec?.paramRef),
    ],
  ]),
};

/** The binding's ParamRef column: `ns/name`, `*\/name` without a namespace, the selector's text, or `<unset>`. */
function paramRefCell(pr: any): string {
  if (!pr) return '<unset>';
  if (pr.name) return `${pr.namespace || '*'}/${pr.name}`;
  if (pr.selector) return formatLabelSelector(labelSelectorRequirements(pr.selector) ?? []);
  return '<unset>';
}

function bindingCells(b: K8sObject, now: number): unknown[] {
  const subs: any[] = b.subjects ?? [];
  const of = (k: string) =>
    subs
      .filter((s) => s.kind === k)
      .map((s) => (k === 'ServiceAccount' ? `${s.namespace ?? ''}/${s.name}` : s.name))
      .join(', ');
  return [
    b.metadata.name,
    `${b.roleRef?.kind}/${b.roleRef?.name}`,
    age(b.metadata.creationTimestamp, now),
    of('User'),
    of('Group'),
    of('ServiceAccount'),
  ];
}

/** Tables for kinds without a printer: Name and Created At, as Kubernetes' default table convertor. */
export const defaultTable: TableSpec = {
  columns: [
    NAME,
    col(
      'Created At',
      'date',
      0,
      '',
      'CreationTimestamp is a timestamp representing the server time when this object was created.',
    ),
  ],
  cells: (o) => [o.metadata.name, o.metadata.creationTimestamp],
};

export function stringifyForTable(v: unknown): unknown {
  if (v === undefined || v === null) return null;
  return v;
}
