// The paths that are not resources: `/version`, discovery (`/api`, `/apis`, per group and group-version, aggregated
// v2/v2beta1 when the Accept header asks for it; discovery.ts builds the documents) and OpenAPI: v3 (`/openapi/v3`,
// per group-version documents from openapi.ts) and v2 (`/openapi/v2`, openapi-v2.ts, JSON or protobuf), rebuilt only
// when the served resources or a CRD change.
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
import { contentHash, openapiIndex } from '../openapi.ts';
import { swaggerDocument } from '../openapi-v2.ts';
import { encodeSwagger } from '../openapi-v2-proto.ts';
import { negotiate } from '../request-info.ts';

export class NonResourcePaths {
  private readonly core: Core;
  private readonly serverAddress: () => string;
  /** Registered subresources (pods/log, ...), which discovery lists. */
  private readonly subresourceInfo: SubresourceInfo[];
  private openapiCache?: OpenApiCache;

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
      if (p === '/openapi/v3') return { body: oa.v3.index };
      const doc = oa.v3.docs.get(p.slice('/openapi/v3/'.length));
      if (!doc) throw errors.noResource();
      return {
        body: doc.json,
        headers: { ETag: `"${doc.hash}"`, ...(q.has('hash') ? { 'Cache-Control': 'public, immutable' } : {}) },
      };
    }
    if (p === '/openapi/v2') return this.openapiV2(String(req.headers.accept ?? ''));
    throw errors.noResource();
  }

  /** `/openapi/v2`: JSON, or gnostic protobuf when the Accept header asks for it (kubectl always does). */
  private openapiV2(accept: string): { body: unknown; headers: Record<string, string> } {
    const oa = this.openapi();
    oa.v2 ??= v2Forms(swaggerDocument(this.core.registry));
    if (accept.includes('com.github.proto-openapi.spec.v2'))
      return {
        body: oa.v2.proto,
        headers: { 'Content-Type': PROTO_V2, ETag: `"${oa.v2.hash}"`, Vary: 'Accept' },
      };
    return { body: oa.v2.json, headers: { ETag: `"${oa.v2.hash}"`, Vary: 'Accept' } };
  }

  /**
   * The OpenAPI documents, rebuilt when the served resources or a CRD change (v3 at once, v2 on first request), never
   * per request: responses send the JSON (and protobuf) serialized once.
   */
  private openapi(): OpenApiCache {
    const key = this.core.registry
      .all()
      .map(
        (r) =>
          `${r.group}/${r.version}/${r.plural}/${r.crd?.uid ?? ''}:${this.core.store.get('apiextensions.k8s.io/customresourcedefinitions', `${r.plural}.${r.group}`)?.metadata.resourceVersion ?? ''}`,
      )
      .join(',');
    if (this.openapiCache?.key !== key) this.openapiCache = { key, v3: openapiIndex(this.core.registry) };
    return this.openapiCache;
  }
}

/** The protobuf form's Content-Type as kube-openapi's handler returns it (the `@` kubectl asks with is not a token). */
const PROTO_V2 = 'application/com.github.proto-openapi.spec.v2.v1.0+protobuf';

interface OpenApiCache {
  key: string;
  v3: ReturnType<typeof openapiIndex>;
  v2?: { json: string; proto: Uint8Array; hash: string };
}

function v2Forms(doc: unknown): { json: string; proto: Uint8Array; hash: string } {
  const json = JSON.stringify(doc);
  return { json, proto: encodeSwagger(doc as Record<string, unknown>), hash: contentHash(json) };
}
