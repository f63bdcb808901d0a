// The paths that are not resources: `/version`, discovery (`/api`, `/apis`, per group and group-version, aggregated
// v2/v2beta1 when the Accept header asks for it; discovery.ts builds the documents) and OpenAPI v3 (`/openapi/v3`,
// per group-version documents from openapi.ts, rebuilt only when the served resources or a CRD change).
import type { IncomingMessage } from 'node:http';
import type { Core } from '../core.ts';
import {
  aggregatedDiscovery,
  apiGroup,
  apiGroupList,
  apiResourceList,
  apiVersions,
  type SubresourceInfo,
  versionInfo,
} from '../discovery.ts';
import { errors } from '../errors.ts';
import { openapiIndex } from '../openapi.ts';
import { negotiate } from '../request-info.ts';

export class NonResourcePaths {
  private readonly core: Core;
  private readonly serverAddress: () => string;
  /** Registered subresources (pods/log, ...), which discovery lists. */
  private readonly subresourceInfo: SubresourceInfo[];
  private openapiCache?: { key: string; value: ReturnType<typeof openapiIndex> };

  constructor(core: Core, serverAddress: () => string, subresourceInfo: SubresourceInfo[]) {
    this.core = core;
    this.serverAddress = serverAddress;
    this.subresourceInfo = subresourceInfo;
  }

  /** The body (and headers) of a GET of a non-resource path; 404 for an unknown one. */
  body(req: IncomingMessage, path: string, q: URLSearchParams): { body: unknown; headers?: Record<string, string> } {
    const neg = negotiate(req.headers.accept);
    const p = path.replace(/\/+$/, '') || '/';
    const reg = this.core.registry;
    if (p === '/version') return { body: versionInfo() };
    if (p === '/api' || p === '/apis') {
      if (neg.as === 'APIGroupDiscoveryList') {
        const v = neg.discoveryVersion!;
        return {
          body: aggregatedDiscovery(reg, p === '/api', v, this.subresourceInfo),
          headers: { 'Content-Type': `application/json;g=apidiscovery.k8s.io;v=${v};as=APIGroupDiscoveryList` },
        };
      }
      return { body: p === '/api' ? apiVersions(this.serverAddress()) : apiGroupList(reg) };
    }
    if (p === '/api/v1')
      return {
        body: apiResourceList(
          reg.all().filter((r) => !r.group),
          'v1',
          this.subresourceInfo,
        ),
      };
    let m = /^\/apis\/([^/]+)$/.exec(p);
    if (m) {
      const name = m[1];
      const g = reg.groups().find((x) => x.name === name);
      if (!g) throw errors.noResource();
      return { body: apiGroup(g.name, g.versions) };
    }
    m = /^\/apis\/([^/]+)\/([^/]+)$/.exec(p);
    if (m) {
      const [, group, version] = m;
      const rts = reg.all().filter((r) => r.group === group && r.version === version);
      if (!rts.length) throw errors.noResource();
      return { body: apiResourceList(rts, `${group}/${version}`, this.subresourceInfo) };
    }
    if (p === '/openapi/v3' || p.startsWith('/openapi/v3/')) {
      const oa = this.openapi();
      if (p === '/openapi/v3') return { body: oa.index };
      const doc = oa.docs.get(p.slice('/openapi/v3/'.length));
      if (!doc) throw errors.noResource();
      return { body: doc, headers: q.has('hash') ? { 'Cache-Control': 'public, immutable' } : {} };
    }
    throw errors.noResource();
  }

  private openapi() {
    const key = this.core.registry
      .all()
      .map(
        (r) =>
          `${r.group}/${r.version}/${r.plural}/${r.crd?.uid ?? ''}:${this.core.store.get('apiextensions.k8s.io/customresourcedefinitions', `${r.plural}.${r.group}`)?.metadata.resourceVersion ?? ''}`,
      )
      .join(',');
    if (this.openapiCache?.key !== key) this.openapiCache = { key, value: openapiIndex(this.core.registry) };
    return this.openapiCache.value;
  }
}
