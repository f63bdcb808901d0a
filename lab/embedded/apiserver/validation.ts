// Validation of built-in kinds. Types, required fields and enums come from kubernetes-models' generated validators
// (compiled JSON Schema of the Kubernetes OpenAPI spec); unknown fields from schema.ts; names, labels, annotations and
// keys with apimachinery's validators and messages (names.ts), and the cross-field rules that clients depend on
// (selector matches template, unique container names, port ranges) are checked here.
import { validateBinding, validatePolicy } from './admission/validation.ts';
import { type FieldError, fieldErrors } from './errors.ts';
import { MODEL_SCHEMAS } from './model-schemas.ts';
import { isConfigMapKey, isQualifiedName, isValidLabelValue, type NameRule, nameErrors } from './names.ts';
import type { K8sObject } from './store.ts';

export type { NameRule } from './names.ts';

type AjvError = { instancePath: string; keyword: string; params: Record<string, any>; message?: string };
type AjvValidate = ((data: unknown) => boolean) & { errors?: AjvError[] | null };

const validators = new Map<string, AjvValidate>();

/** Loads kubernetes-models' validators for the built-in resources (once, at server start). */
export async function loadModelValidators(): Promise<void> {
  await Promise.all(
    Object.entries(MODEL_SCHEMAS).map(async ([resource, model]) => {
      if (validators.has(resource)) return;
      const mod = await import(`kubernetes-models/_schemas/${model}`);
      validators.set(resource, mod.validate as AjvValidate);
    }),
  );
}

/** `/spec/containers/0/name` → `spec.containers[0].name` */
export function pointerToPath(ptr: string): string {
  let out = '';
  for (const seg of ptr.split('/').slice(1)) {
    const s = seg.replace(/~1/g, '/').replace(/~0/g, '~');
    if (/^\d+$/.test(s)) out += `[${s}]`;
    else out += out ? `.${s}` : s;
  }
  return out;
}

function valueAt(obj: unknown, ptr: string): unknown {
  let cur: any = obj;
  for (const seg of ptr.split('/').slice(1)) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = cur[seg.replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  return cur;
}

export interface ModelCheck {
  /** Values of the wrong JSON type: a decode error in Kubernetes (400 BadRequest). */
  typeErrors: { field: string; expected: string; actual: string }[];
  /** Missing required fields and unsupported enum values (422 Invalid). */
  fieldErrors: FieldError[];
}

export function checkModel(resource: string, obj: K8sObject): ModelCheck {
  const res: ModelCheck = { typeErrors: [], fieldErrors: [] };
  const v = validators.get(resource);
  if (!v || v(obj)) return res;
  const seen = new Set<string>();
  for (const e of v.errors ?? []) {
    const field = pointerToPath(e.instancePath);
    if (e.keyword === 'type') {
      if (field === 'apiVersion' || field === 'kind') continue;
      const actual = valueAt(obj, e.instancePath);
      if (actual === null) continue; // null means "unset" to Kubernetes' decoder
      const key = `t:${field}`;
      if (seen.has(key)) continue;
      seen.add(key);
      res.typeErrors.push({
        field,
        expected: String(e.params.type),
        actual: Array.isArray(actual) ? 'array' : typeof actual,
      });
    } else if (e.keyword === 'required') {
      const f = field ? `${field}.${e.params.missingProperty}` : String(e.params.missingProperty);
      if (f === 'apiVersion' || f === 'kind') continue;
      res.fieldErrors.push(fieldErrors.required(f));
    } else if (e.keyword === 'enum') {
      if (field === 'apiVersion' || field === 'kind') continue;
      res.fieldErrors.push(fieldErrors.notSupported(field, valueAt(obj, e.instancePath), e.params.allowedValues));
    }
  }
  return res;
}

/** The name rule of a built-in resource: its ValidateNameFunc in Kubernetes' pkg/apis/<group>/validation. */
export function nameRule(resource: string): NameRule {
  if (resource === 'namespaces') return 'label'; // ValidateNamespaceName
  if (resource === 'services') return 'dns1035'; // ValidateServiceName
  if (['roles', 'clusterroles', 'rolebindings', 'clusterrolebindings'].includes(resource)) return 'path'; // ValidateRBACName
  return 'subdomain'; // NameIsDNSSubdomain: pods, configmaps, secrets, nodes, deployments, ...
}

/** Every message of the rule, each one field error (ValidateObjectMeta, ValidateDNS1123Label). */
export function validateName(name: string, rule: NameRule, field = 'metadata.name', prefix = false): FieldError[] {
  return nameErrors(name, rule, prefix).map((msg) => fieldErrors.invalid(field, name, msg));
}

const invalidEach = (field: string, value: string, msgs: string[]) =>
  msgs.map((msg) => fieldErrors.invalid(field, value, msg));

/**
 * Metadata rules shared by all kinds, in ValidateObjectMetaAccessor's order: generateName, name, labels, annotations
 * (and their total size), owner references, finalizers.
 */
export function validateMeta(obj: K8sObject, rule: NameRule): FieldError[] {
  const errs: FieldError[] = [];
  const m = obj.metadata;
  if (typeof m.generateName === 'string' && m.generateName)
    errs.push(...validateName(m.generateName, rule, 'metadata.generateName', true));
  if (!m.name) errs.push(fieldErrors.required('metadata.name', 'name or generateName is required'));
  else errs.push(...validateName(m.name, rule));
  for (const [k, v] of Object.entries(m.labels ?? {})) {
    errs.push(...invalidEach('metadata.labels', k, isQualifiedName(k)));
    errs.push(...invalidEach('metadata.labels', String(v), isValidLabelValue(String(v))));
  }
  for (const k of Object.keys(m.annotations ?? {}))
    errs.push(...invalidEach('metadata.annotations', k, isQualifiedName(k.toLowerCase())));
  const annSize = Object.entries(m.annotations ?? {}).reduce(
    (n, [k, v]) => n + Buffer.byteLength(k) + Buffer.byteLength(String(v)),
    0,
  );
  if (annSize > 256 * 1024)
    errs.push({
      field: 'metadata.annotations',
      reason: 'FieldValueTooLong',
      message: 'Too long: may not be more than 262144 bytes',
    });
  (m.ownerReferences ?? []).forEach((r: any, i: number) => {
    for (const f of ['apiVersion', 'kind', 'name', 'uid'])
      if (!r?.[f]) errs.push(fieldErrors.required(`metadata.ownerReferences[${i}].${f}`));
  });
  for (const f of m.finalizers ?? []) errs.push(...invalidEach('metadata.finalizers', f, isQualifiedName(f)));
  return errs;
}

function validatePodSpec(spec: any, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (!spec) return [fieldErrors.required(path)];
  const names = new Set<string>();
  const check = (list: any[] | undefined, field: string, required: boolean) => {
    if (required && !list?.length) errs.push(fieldErrors.required(`${path}.${field}`));
    (list ?? []).forEach((c, i) => {
      const p = `${path}.${field}[${i}]`;
      if (!c?.name) errs.push(fieldErrors.required(`${p}.name`));
      else {
        errs.push(...validateName(c.name, 'label', `${p}.name`));
        if (names.has(c.name)) errs.push(fieldErrors.duplicate(`${p}.name`, c.name));
        names.add(c.name);
      }
      if (!c?.image) errs.push(fieldErrors.required(`${p}.image`));
      (c?.ports ?? []).forEach((port: any, j: number) => {
        const n = port?.containerPort;
        if (typeof n === 'number' && (n < 1 || n > 65535))
          errs.push(fieldErrors.invalid(`${p}.ports[${j}].containerPort`, n, 'must be between 1 and 65535, inclusive'));
      });
    });
  };
  check(spec.containers, 'containers', true);
  check(spec.initContainers, 'initContainers', false);
  const vols = new Set<string>();
  (spec.volumes ?? []).forEach((v: any, i: number) => {
    if (!v?.name) errs.push(fieldErrors.required(`${path}.volumes[${i}].name`));
    else {
      errs.push(...validateName(v.name, 'label', `${path}.volumes[${i}].name`));
      if (vols.has(v.name)) errs.push(fieldErrors.duplicate(`${path}.volumes[${i}].name`, v.name));
      vols.add(v.name);
    }
  });
  for (const [field, list] of [
    ['containers', spec.containers],
    ['initContainers', spec.initContainers],
  ] as const) {
    (list ?? []).forEach((c: any, i: number) => {
      (c?.volumeMounts ?? []).forEach((vm: any, j: number) => {
        if (vm?.name && !vols.has(vm.name))
          errs.push({
            field: `${path}.${field}[${i}].volumeMounts[${j}].name`,
            reason: 'FieldValueNotFound',
            message: `Not found: ${JSON.stringify(vm.name)}`,
          });
      });
    });
  }
  return errs;
}

function selectorMatchesTemplate(obj: K8sObject, errs: FieldError[]): void {
  const sel = obj.spec?.selector;
  const labels = obj.spec?.template?.metadata?.labels ?? {};
  if (!sel) {
    errs.push(fieldErrors.required('spec.selector'));
    return;
  }
  if (!Object.keys(sel.matchLabels ?? {}).length && !(sel.matchExpressions ?? []).length) {
    errs.push(fieldErrors.invalid('spec.selector', sel, 'empty selector is invalid for deployment'));
    return;
  }
  for (const [k, v] of Object.entries(sel.matchLabels ?? {})) {
    if (labels[k] !== v) {
      errs.push(
        fieldErrors.invalid('spec.template.metadata.labels', labels, '`selector` does not match template `labels`'),
      );
      return;
    }
  }
}

/** Kind-specific rules; `old` is set on updates. */
export function validateBuiltin(resource: string, obj: K8sObject, old?: K8sObject): FieldError[] {
  const errs: FieldError[] = [];
  switch (resource) {
    case 'pods':
      errs.push(...validatePodSpec(obj.spec, 'spec'));
      break;
    case 'deployments':
    case 'replicasets':
      selectorMatchesTemplate(obj, errs);
      errs.push(...validatePodSpec(obj.spec?.template?.spec, 'spec.template.spec'));
      if (typeof obj.spec?.replicas === 'number' && obj.spec.replicas < 0)
        errs.push(fieldErrors.invalid('spec.replicas', obj.spec.replicas, 'must be greater than or equal to 0'));
      if (old && JSON.stringify(old.spec?.selector) !== JSON.stringify(obj.spec?.selector))
        errs.push(fieldErrors.invalid('spec.selector', obj.spec?.selector, 'field is immutable'));
      break;
    case 'services': {
      const s = obj.spec ?? {};
      if (s.type !== 'ExternalName' && !(s.ports ?? []).length && s.clusterIP !== 'None')
        errs.push(fieldErrors.required('spec.ports'));
      const names = new Set<string>();
      (s.ports ?? []).forEach((p: any, i: number) => {
        if (typeof p?.port === 'number' && (p.port < 1 || p.port > 65535))
          errs.push(fieldErrors.invalid(`spec.ports[${i}].port`, p.port, 'must be between 1 and 65535, inclusive'));
        if ((s.ports ?? []).length > 1 && !p?.name) errs.push(fieldErrors.required(`spec.ports[${i}].name`));
        if (p?.name) {
          if (names.has(p.name)) errs.push(fieldErrors.duplicate(`spec.ports[${i}].name`, p.name));
          names.add(p.name);
        }
      });
      if (old?.spec?.clusterIP && s.clusterIP && old.spec.clusterIP !== s.clusterIP)
        errs.push(fieldErrors.invalid('spec.clusterIP', s.clusterIP, 'field is immutable'));
      break;
    }
    case 'configmaps':
    case 'secrets': {
      // ValidateConfigMap / ValidateSecret: every message of IsConfigMapKey per key, at data[key] or binaryData[key].
      const keyErrs = (bag: string, keys: string[]) =>
        keys.flatMap((k) => invalidEach(`${bag}[${k}]`, k, isConfigMapKey(k)));
      errs.push(...keyErrs('data', Object.keys(obj.data ?? {})));
      if (resource === 'configmaps') {
        errs.push(...keyErrs('binaryData', Object.keys(obj.binaryData ?? {})));
        for (const k of Object.keys(obj.data ?? {}))
          if (obj.binaryData && k in obj.binaryData)
            errs.push(fieldErrors.invalid(`data[${k}]`, k, 'duplicate of key present in binaryData'));
      } else {
        for (const [k, v] of Object.entries(obj.data ?? {})) {
          if (typeof v === 'string' && !/^[A-Za-z0-9+/]*={0,2}$/.test(v))
            errs.push(fieldErrors.invalid(`data[${k}]`, '<secret>', 'illegal base64 data'));
        }
      }
      break;
    }
    case 'rolebindings':
    case 'clusterrolebindings': {
      const r = obj.roleRef;
      if (!r?.kind) errs.push(fieldErrors.required('roleRef.kind'));
      else if (
        resource === 'clusterrolebindings' ? r.kind !== 'ClusterRole' : !['Role', 'ClusterRole'].includes(r.kind)
      )
        errs.push(
          fieldErrors.notSupported(
            'roleRef.kind',
            r.kind,
            resource === 'clusterrolebindings' ? ['ClusterRole'] : ['Role', 'ClusterRole'],
          ),
        );
      if (!r?.name) errs.push(fieldErrors.required('roleRef.name'));
      if (old && JSON.stringify(old.roleRef) !== JSON.stringify(obj.roleRef))
        errs.push(fieldErrors.invalid('roleRef', obj.roleRef, 'cannot change roleRef'));
      (obj.subjects ?? []).forEach((s: any, i: number) => {
        if (!s?.name) errs.push(fieldErrors.required(`subjects[${i}].name`));
        if (s?.kind === 'ServiceAccount' && !s.namespace && resource === 'clusterrolebindings')
          errs.push(fieldErrors.required(`subjects[${i}].namespace`));
        if (!['User', 'Group', 'ServiceAccount'].includes(s?.kind))
          errs.push(fieldErrors.notSupported(`subjects[${i}].kind`, s?.kind, ['ServiceAccount', 'User', 'Group']));
      });
      break;
    }
    case 'roles':
    case 'clusterroles':
      (obj.rules ?? []).forEach((r: any, i: number) => {
        if (!r?.verbs?.length)
          errs.push(fieldErrors.required(`rules[${i}].verbs`, 'verbs must contain at least one value'));
        if (!r?.nonResourceURLs?.length && !r?.resources?.length && resource === 'roles')
          errs.push(fieldErrors.required(`rules[${i}].resources`, 'resource rules must supply at least one resource'));
        if (!r?.nonResourceURLs?.length && r?.resources?.length && r?.apiGroups === undefined)
          errs.push(fieldErrors.required(`rules[${i}].apiGroups`, 'resource rules must supply at least one api group'));
      });
      break;
    case 'events':
      if (!obj.involvedObject) errs.push(fieldErrors.required('involvedObject'));
      break;
    case 'leases':
      break;
    case 'validatingadmissionpolicies':
      errs.push(...validatePolicy(obj));
      break;
    case 'validatingadmissionpolicybindings':
      errs.push(...validateBinding(obj));
      break;
  }
  return errs;
}
