// Discovery documents: aggregated discovery v2 (and v2beta1) on /api and /apis, the legacy APIVersions/APIGroupList/
// APIResourceList documents (client-node's KubernetesObjectApi reads the per-group-version lists), and /version.
import { gv, type ResourceRegistry, type ResourceType } from './resources.ts';

export const KUBE_VERSION = { major: '1', minor: '32', gitVersion: 'v1.32.0-gwlab' };

export interface SubresourceInfo {
  resource: string;
  subresource: string;
  kind: { group: string; version: string; kind: string };
  verbs: string[];
}

const VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

export function subresourcesOf(rt: ResourceType, custom: SubresourceInfo[]): SubresourceInfo[] {
  const out: SubresourceInfo[] = [];
  const self = { group: rt.group, version: rt.version, kind: rt.kind };
  if (rt.status)
    out.push({ resource: rt.plural, subresource: 'status', kind: self, verbs: ['get', 'patch', 'update'] });
  if (rt.scale)
    out.push({
      resource: rt.plural,
      subresource: 'scale',
      kind: { group: 'autoscaling', version: 'v1', kind: 'Scale' },
      verbs: ['get', 'patch', 'update'],
    });
  if (rt.builtin && rt.plural === 'serviceaccounts')
    out.push({
      resource: rt.plural,
      subresource: 'token',
      kind: { group: 'authentication.k8s.io', version: 'v1', kind: 'TokenRequest' },
      verbs: ['create'],
    });
  if (rt.builtin && rt.plural === 'namespaces')
    out.push({ resource: rt.plural, subresource: 'finalize', kind: self, verbs: ['update'] });
  if (rt.builtin) for (const c of custom) if (c.resource === rt.plural && !rt.group) out.push(c);
  return out;
}

function resourceVerbs(rt: ResourceType): string[] {
  return rt.readonly ? ['create'] : VERBS;
}

export function apiResourceList(rts: ResourceType[], groupVersion: string, custom: SubresourceInfo[]) {
  const resources: unknown[] = [];
  for (const rt of rts) {
    resources.push({
      name: rt.plural,
      singularName: rt.singular,
      namespaced: rt.namespaced,
      kind: rt.kind,
      verbs: resourceVerbs(rt),
      ...(rt.shortNames.length ? { shortNames: rt.shortNames } : {}),
      ...(rt.categories.length ? { categories: rt.categories } : {}),
    });
    for (const s of subresourcesOf(rt, custom)) {
      resources.push({
        name: `${rt.plural}/${s.subresource}`,
        singularName: '',
        namespaced: rt.namespaced,
        ...(s.kind.group !== rt.group || s.kind.version !== rt.version
          ? { group: s.kind.group, version: s.kind.version }
          : {}),
        kind: s.kind.kind,
        verbs: s.verbs,
      });
    }
  }
  return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion, resources };
}

export function aggregatedDiscovery(
  registry: ResourceRegistry,
  core: boolean,
  version: 'v2' | 'v2beta1',
  custom: SubresourceInfo[],
) {
  const groups = core ? [{ name: '', versions: ['v1'] }] : registry.groups();
  return {
    kind: 'APIGroupDiscoveryList',
    apiVersion: `apidiscovery.k8s.io/${version}`,
    metadata: {},
    items: groups.map((g) => ({
      metadata: { name: g.name, creationTimestamp: null },
      versions: g.versions.map((v) => ({
        version: v,
        freshness: 'Current',
        resources: registry
          .all()
          .filter((rt) => rt.group === g.name && rt.version === v)
          .map((rt) => ({
            resource: rt.plural,
            responseKind: { group: rt.group, version: rt.version, kind: rt.kind },
            scope: rt.namespaced ? 'Namespaced' : 'Cluster',
            singularResource: rt.singular,
            verbs: resourceVerbs(rt),
            ...(rt.shortNames.length ? { shortNames: rt.shortNames } : {}),
            ...(rt.categories.length ? { categories: rt.categories } : {}),
            ...(() => {
              const subs = subresourcesOf(rt, custom);
              return subs.length
                ? {
                    subresources: subs.map((s) => ({
                      subresource: s.subresource,
                      responseKind: s.kind,
                      verbs: s.verbs,
                    })),
                  }
                : {};
            })(),
          })),
      })),
    })),
  };
}

export function apiGroupList(registry: ResourceRegistry) {
  return {
    kind: 'APIGroupList',
    apiVersion: 'v1',
    groups: registry.groups().map((g) => apiGroup(g.name, g.versions)),
  };
}

export function apiGroup(name: string, versions: string[]) {
  return {
    kind: 'APIGroup',
    apiVersion: 'v1',
    name,
    versions: versions.map((v) => ({ groupVersion: `${name}/${v}`, version: v })),
    preferredVersion: { groupVersion: `${name}/${versions[0]}`, version: versions[0] },
  };
}

export function apiVersions(serverAddress: string) {
  return {
    kind: 'APIVersions',
    versions: ['v1'],
    serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }],
  };
}

export function versionInfo() {
  return {
    ...KUBE_VERSION,
    gitCommit: '0000000000000000000000000000000000000000',
    gitTreeState: 'clean',
    buildDate: '2026-01-01T00:00:00Z',
    goVersion: `node${process.versions.node}`,
    compiler: 'gc',
    platform: `${process.platform}/${process.arch === 'x64' ? 'amd64' : process.arch}`,
  };
}

export { gv };
