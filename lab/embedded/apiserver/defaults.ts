// Defaulting of built-in kinds, as Kubernetes' defaulters set the fields that kubectl and controllers rely on
// (pods: restartPolicy, dnsPolicy, imagePullPolicy, probe timings; deployments: replicas and strategy; services:
// type, protocols, targetPort). Only the fields that matter to this lab's clients are covered.
import type { K8sObject } from './store.ts';

type Obj = Record<string, any>;

function setIfMissing(o: Obj, k: string, v: unknown): void {
  if (o[k] === undefined || o[k] === null) o[k] = v;
}

function defaultProbe(p: Obj | undefined): void {
  if (!p) return;
  setIfMissing(p, 'timeoutSeconds', 1);
  setIfMissing(p, 'periodSeconds', 10);
  setIfMissing(p, 'successThreshold', 1);
  setIfMissing(p, 'failureThreshold', 3);
  if (p.httpGet) setIfMissing(p.httpGet, 'scheme', 'HTTP');
  if (p.httpGet) setIfMissing(p.httpGet, 'path', '/');
}

function defaultContainer(c: Obj): void {
  if (c.image !== undefined && c.imagePullPolicy === undefined) {
    const img = String(c.image);
    const tag = img.includes('@') ? 'digest' : /:[^/:]+$/.exec(img)?.[0].slice(1);
    c.imagePullPolicy = !tag || tag === 'latest' ? 'Always' : 'IfNotPresent';
  }
  setIfMissing(c, 'terminationMessagePath', '/dev/termination-log');
  setIfMissing(c, 'terminationMessagePolicy', 'File');
  setIfMissing(c, 'resources', {});
  for (const p of c.ports ?? []) setIfMissing(p, 'protocol', 'TCP');
  for (const e of c.env ?? []) if (e.valueFrom?.fieldRef) setIfMissing(e.valueFrom.fieldRef, 'apiVersion', 'v1');
  defaultProbe(c.livenessProbe);
  defaultProbe(c.readinessProbe);
  defaultProbe(c.startupProbe);
}

export function defaultPodSpec(spec: Obj | undefined): void {
  if (!spec) return;
  setIfMissing(spec, 'restartPolicy', 'Always');
  setIfMissing(spec, 'dnsPolicy', 'ClusterFirst');
  setIfMissing(spec, 'schedulerName', 'default-scheduler');
  setIfMissing(spec, 'terminationGracePeriodSeconds', 30);
  setIfMissing(spec, 'securityContext', {});
  setIfMissing(spec, 'enableServiceLinks', true);
  if (spec.serviceAccountName === undefined && spec.serviceAccount !== undefined)
    spec.serviceAccountName = spec.serviceAccount;
  setIfMissing(spec, 'serviceAccountName', 'default');
  setIfMissing(spec, 'serviceAccount', spec.serviceAccountName);
  for (const c of spec.containers ?? []) defaultContainer(c);
  for (const c of spec.initContainers ?? []) defaultContainer(c);
  for (const v of spec.volumes ?? []) {
    if (v.configMap) setIfMissing(v.configMap, 'defaultMode', 420);
    if (v.secret) setIfMissing(v.secret, 'defaultMode', 420);
    if (v.projected) setIfMissing(v.projected, 'defaultMode', 420);
    if (v.downwardAPI) setIfMissing(v.downwardAPI, 'defaultMode', 420);
  }
}

export function defaultBuiltin(resource: string, obj: K8sObject): void {
  switch (resource) {
    case 'validatingadmissionpolicies':
    case 'validatingadmissionpolicybindings':
      defaultAdmissionPolicy(obj);
      break;
    case 'pods':
      defaultPodSpec(obj.spec);
      break;
    case 'deployments': {
      obj.spec ??= {};
      const s = obj.spec;
      setIfMissing(s, 'replicas', 1);
      setIfMissing(s, 'revisionHistoryLimit', 10);
      setIfMissing(s, 'progressDeadlineSeconds', 600);
      setIfMissing(s, 'strategy', { type: 'RollingUpdate' });
      if (s.strategy.type === undefined) s.strategy.type = 'RollingUpdate';
      if (s.strategy.type === 'RollingUpdate') {
        s.strategy.rollingUpdate ??= {};
        setIfMissing(s.strategy.rollingUpdate, 'maxUnavailable', '25%');
        setIfMissing(s.strategy.rollingUpdate, 'maxSurge', '25%');
      }
      defaultPodSpec(s.template?.spec);
      break;
    }
    case 'replicasets': {
      obj.spec ??= {};
      const s = obj.spec;
      setIfMissing(s, 'replicas', 1);
      defaultPodSpec(s.template?.spec);
      break;
    }
    case 'services': {
      obj.spec ??= {};
      const s = obj.spec;
      setIfMissing(s, 'type', 'ClusterIP');
      if (s.type !== 'ExternalName') {
        setIfMissing(s, 'sessionAffinity', 'None');
        setIfMissing(s, 'internalTrafficPolicy', 'Cluster');
      }
      if (s.type === 'LoadBalancer' || s.type === 'NodePort') {
        setIfMissing(s, 'externalTrafficPolicy', 'Cluster');
      }
      if (s.type === 'LoadBalancer') setIfMissing(s, 'allocateLoadBalancerNodePorts', true);
      for (const p of s.ports ?? []) {
        setIfMissing(p, 'protocol', 'TCP');
        if (p.targetPort === undefined || p.targetPort === 0 || p.targetPort === '') p.targetPort = p.port;
      }
      break;
    }
    case 'secrets':
      setIfMissing(obj, 'type', 'Opaque');
      // stringData is write-only, as in Kubernetes: merged into data (base64), its keys winning, and never stored.
      if (obj.stringData && typeof obj.stringData === 'object') {
        obj.data = { ...(obj.data ?? {}) };
        for (const [k, v] of Object.entries(obj.stringData)) obj.data[k] = Buffer.from(String(v)).toString('base64');
        delete obj.stringData;
      }
      break;
    case 'namespaces': {
      obj.spec ??= {};
      setIfMissing(obj.spec, 'finalizers', ['kubernetes']);
      obj.metadata.labels = { ...obj.metadata.labels, 'kubernetes.io/metadata.name': obj.metadata.name! };
      break;
    }
    case 'rolebindings':
    case 'clusterrolebindings':
      for (const s of obj.subjects ?? []) {
        // ServiceAccount subjects keep the empty (omitted) group.
        if (s.apiGroup === undefined && s.kind !== 'ServiceAccount') s.apiGroup = 'rbac.authorization.k8s.io';
      }
      break;
    case 'endpointslices':
      for (const p of obj.ports ?? []) setIfMissing(p, 'protocol', 'TCP');
      break;
    case 'endpoints':
      for (const s of obj.subsets ?? []) for (const p of s.ports ?? []) setIfMissing(p, 'protocol', 'TCP');
      break;
    case 'customresourcedefinitions': {
      const s = obj.spec ?? {};
      s.conversion ??= { strategy: 'None' };
      if (s.names) {
        setIfMissing(s.names, 'singular', String(s.names.kind ?? '').toLowerCase());
        setIfMissing(s.names, 'listKind', `${s.names.kind}List`);
      }
      break;
    }
  }
}

/**
 * k8s.io/kubernetes pkg/apis/admissionregistration/v1/defaults.go: a policy's failurePolicy Fail; match resources'
 * matchPolicy Equivalent and empty (match-all) namespace and object selectors; each rule's scope `*`.
 */
function defaultAdmissionPolicy(obj: K8sObject): void {
  const s = obj.spec;
  if (!s || typeof s !== 'object') return;
  if (obj.kind === 'ValidatingAdmissionPolicy') setIfMissing(s, 'failurePolicy', 'Fail');
  const m = s.matchConstraints ?? s.matchResources;
  if (!m || typeof m !== 'object') return;
  setIfMissing(m, 'matchPolicy', 'Equivalent');
  setIfMissing(m, 'namespaceSelector', {});
  setIfMissing(m, 'objectSelector', {});
  for (const r of [...(m.resourceRules ?? []), ...(m.excludeResourceRules ?? [])])
    if (r && typeof r === 'object') setIfMissing(r, 'scope', '*');
}
