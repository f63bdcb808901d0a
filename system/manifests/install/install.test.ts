// The control plane's install manifest: schema-valid objects with the contract's identifiers (the built-in kinds by
// kubernetes-models, the GatewayClass by the vendored upstream CRD's schema of the fields it sets).
import { readFileSync } from 'node:fs';
import { Deployment } from 'kubernetes-models/apps/v1';
import { ClusterRole, ClusterRoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1';
import { Namespace, Service, ServiceAccount } from 'kubernetes-models/v1';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { SYSTEM_IMAGE } from '../../image.ts';

const docs = parseAllDocuments(readFileSync(new URL('./gwvendor.yaml', import.meta.url), 'utf8')).map((d) => d.toJS());
const one = (kind: string) => {
  const found = docs.filter((d) => d.kind === kind);
  expect(found, kind).toHaveLength(1);
  return found[0];
};

/** The GatewayClass against the vendored v1.6.1 CRD: a served version, known spec fields, controllerName's bounds. */
function expectGatewayClassValid(gc: any) {
  const bundle = JSON.parse(readFileSync(new URL('../gateway-api/standard-install.json', import.meta.url), 'utf8'));
  const crd = bundle.find((d: any) => d.metadata.name === 'gatewayclasses.gateway.networking.k8s.io');
  const [group, version] = gc.apiVersion.split('/');
  expect(crd.spec.group).toBe(group);
  const v = crd.spec.versions.find((x: any) => x.name === version && x.served);
  expect(v, `${gc.apiVersion} served`).toBeDefined();
  const spec = v.schema.openAPIV3Schema.properties.spec;
  for (const r of spec.required) expect(gc.spec, r).toHaveProperty(r);
  for (const k of Object.keys(gc.spec)) expect(spec.properties, k).toHaveProperty(k);
  const name = spec.properties.controllerName;
  expect(gc.spec.controllerName).toMatch(new RegExp(name.pattern));
  expect(gc.spec.controllerName.length).toBeLessThanOrEqual(name.maxLength);
}

describe('install manifest', () => {
  it('holds the namespace, ServiceAccount, RBAC, Deployment, Service and GatewayClass, all schema-valid', () => {
    expect(docs.map((d) => d.kind)).toEqual([
      'Namespace',
      'ServiceAccount',
      'ClusterRole',
      'ClusterRoleBinding',
      'Service',
      'Deployment',
      'GatewayClass',
    ]);
    new Namespace(one('Namespace')).validate();
    new ServiceAccount(one('ServiceAccount')).validate();
    new ClusterRole(one('ClusterRole')).validate();
    new ClusterRoleBinding(one('ClusterRoleBinding')).validate();
    new Service(one('Service')).validate();
    new Deployment(one('Deployment')).validate();
    expectGatewayClassValid(one('GatewayClass'));
  });

  it('uses the contract identifiers: gwvendor-system, deployment gwvendor, xDS port 9977, class gwvendor', () => {
    expect(one('Namespace').metadata.name).toBe('gwvendor-system');
    const dep = one('Deployment');
    expect([dep.metadata.namespace, dep.metadata.name]).toEqual(['gwvendor-system', 'gwvendor']);
    const c = dep.spec.template.spec.containers[0];
    expect(c.image).toBe(SYSTEM_IMAGE);
    expect(c.imagePullPolicy).toBe('IfNotPresent');
    expect(c.args[0]).toBe('controlplane');
    expect(c.args).toContain('--admin-port=9095');
    const env = Object.fromEntries(c.env.map((e: any) => [e.name, e.value ?? e.valueFrom]));
    expect(env.GWVENDOR_PROXY_IMAGE).toBe(SYSTEM_IMAGE);
    expect(env.GWVENDOR_XDS_VALIDATION).toBe('strict');
    expect(env.POD_NAMESPACE).toEqual({ fieldRef: { fieldPath: 'metadata.namespace' } });
    expect(dep.spec.template.spec.serviceAccountName).toBe(one('ServiceAccount').metadata.name);

    const svc = one('Service');
    expect([svc.metadata.namespace, svc.metadata.name]).toEqual(['gwvendor-system', 'gwvendor']);
    expect(svc.spec.ports).toEqual([expect.objectContaining({ port: 9977, targetPort: 9977 })]);
    expect(svc.spec.selector).toEqual(dep.spec.selector.matchLabels);
    expect(dep.spec.template.metadata.labels).toMatchObject(dep.spec.selector.matchLabels);

    const gc = one('GatewayClass');
    expect(gc.metadata.name).toBe('gwvendor');
    expect(gc.spec.controllerName).toBe('gateway.gwvendor.dev/gwvendor');

    const crb = one('ClusterRoleBinding');
    expect(crb.roleRef.name).toBe(one('ClusterRole').metadata.name);
    expect(crb.subjects).toEqual([{ kind: 'ServiceAccount', name: 'gwvendor', namespace: 'gwvendor-system' }]);
  });
});

describe('install RBAC', () => {
  it('grants list and watch on everything the control plane watches, and what it writes', async () => {
    const { WATCHED } = await import('../../controlplane/kube/watched.ts');
    const rules = one('ClusterRole').rules as { apiGroups: string[]; resources: string[]; verbs: string[] }[];
    const allows = (group: string, resource: string, verb: string) =>
      rules.some((r) => r.apiGroups.includes(group) && r.resources.includes(resource) && r.verbs.includes(verb));
    for (const w of WATCHED) {
      const [resource, ...g] = w.resource.split('.');
      for (const verb of ['list', 'watch'])
        expect(allows(g.join('.'), resource, verb), `${verb} ${w.resource}`).toBe(true);
    }
    for (const r of [
      'gatewayclasses/status',
      'gateways/status',
      'httproutes/status',
      'grpcroutes/status',
      'tcproutes/status',
      'udproutes/status',
      'tlsroutes/status',
      'listenersets/status',
      'backendtlspolicies/status',
    ]) {
      expect(allows('gateway.networking.k8s.io', r, 'patch'), r).toBe(true);
    }
    for (const r of ['trafficpolicies/status', 'gatewayextensions/status', 'listenerpolicies/status'])
      expect(allows('gateway.gwvendor.dev', r, 'patch'), r).toBe(true);
    for (const r of ['services', 'serviceaccounts', 'configmaps']) expect(allows('', r, 'patch'), r).toBe(true);
    expect(allows('apps', 'deployments', 'patch')).toBe(true);
    expect(allows('', 'events', 'create')).toBe(true);
  });
});
