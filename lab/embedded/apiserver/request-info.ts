// What a request asks for, by Kubernetes' rules: the RequestInfo of k8s.io/apiserver's endpoints/request
// (requestinfo.go: API group, version, namespace, resource, name, subresource and the verb, `watch` included), and
// the response form its Accept header negotiates (endpoints/handlers/negotiation: JSON, Table, PartialObjectMetadata,
// aggregated discovery).

/** A boolean query parameter as the API server and the kubelet read it: `true` or `1`. */
export function boolParam(q: URLSearchParams, k: string): boolean {
  const v = q.get(k);
  return v === 'true' || v === '1';
}

export interface RequestInfo {
  resourceRequest: boolean;
  verb: string;
  group: string;
  version: string;
  namespace?: string;
  resource?: string;
  name?: string;
  subresource?: string;
  watch: boolean;
}

/** The response form a client accepts. */
export interface Negotiated {
  as?: 'Table' | 'PartialObjectMetadata' | 'PartialObjectMetadataList' | 'APIGroupDiscoveryList';
  discoveryVersion?: 'v2' | 'v2beta1';
  json: boolean;
}

const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);

export function parseRequestInfo(method: string, path: string, query: URLSearchParams): RequestInfo {
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  const info: RequestInfo = {
    resourceRequest: false,
    verb: method.toLowerCase(),
    group: '',
    version: '',
    watch: false,
  };
  let rest: string[];
  if (parts[0] === 'api' && parts.length >= 3) {
    info.version = parts[1];
    rest = parts.slice(2);
  } else if (parts[0] === 'apis' && parts.length >= 4) {
    info.group = parts[1];
    info.version = parts[2];
    rest = parts.slice(3);
  } else return info;
  info.resourceRequest = true;
  if (rest[0] === 'watch') {
    info.watch = true;
    rest = rest.slice(1);
  }
  if (rest[0] === 'namespaces' && rest.length >= 2) {
    info.namespace = rest[1];
    if (rest.length > 2 && !NAMESPACE_SUBRESOURCES.has(rest[2])) rest = rest.slice(2);
  }
  info.resource = rest[0];
  info.name = rest[1];
  info.subresource = rest.length > 2 ? rest.slice(2).join('/') : undefined;
  if (info.resource === 'namespaces' && info.name) info.namespace = info.name;
  if (boolParam(query, 'watch')) info.watch = true;
  switch (method) {
    case 'GET':
    case 'HEAD':
      info.verb = info.name && !info.watch ? 'get' : info.watch ? 'watch' : info.name ? 'get' : 'list';
      if (info.watch && info.name) info.verb = 'watch';
      break;
    case 'POST':
      info.verb = 'create';
      break;
    case 'PUT':
      info.verb = 'update';
      break;
    case 'PATCH':
      info.verb = 'patch';
      break;
    case 'DELETE':
      info.verb = info.name ? 'delete' : 'deletecollection';
      break;
  }
  return info;
}

/** What the client accepts, in its order of preference. */
export function negotiate(accept: string | undefined): Negotiated {
  if (!accept) return { json: true };
  let json = false;
  for (const raw of accept.split(',')) {
    const [type, ...params] = raw.split(';').map((s) => s.trim());
    const p = Object.fromEntries(params.map((x) => x.split('=').map((s) => s.trim())));
    const t = type.toLowerCase();
    if (t !== 'application/json' && t !== '*/*' && t !== 'application/*' && t !== 'application/yaml') continue;
    if (p.as === 'Table' && p.g === 'meta.k8s.io') return { as: 'Table', json: true };
    if ((p.as === 'PartialObjectMetadata' || p.as === 'PartialObjectMetadataList') && p.g === 'meta.k8s.io')
      return { as: p.as, json: true };
    if (p.as === 'APIGroupDiscoveryList' && p.g === 'apidiscovery.k8s.io' && (p.v === 'v2' || p.v === 'v2beta1'))
      return { as: 'APIGroupDiscoveryList', discoveryVersion: p.v, json: true };
    if (!p.as) {
      json = true;
      break;
    }
  }
  return { json };
}
