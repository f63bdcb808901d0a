// The TrafficPolicy fields of issue 13 item 4 as users write them (rbac, jwt, buffer, compression, transformation):
// the spec shapes model.ts's TrafficPolicySpec extends. Their CRD schema is
// system/manifests/crds/vendor/traffic-policy-fields.ts; their validation and IR, ir/policy-<field>.ts.

/** A request header to match: exactly one of the value kinds (the CRD's CEL rule says so). */
export interface HeaderMatchSpec {
  name: string;
  exact?: string;
  prefix?: string;
  regex?: string;
  present?: boolean;
}

/** Envoy's RBAC (config.rbac.v3): who (principals) may do what (permissions); Allow lists or Deny lists. */
export interface RbacSpec {
  action: 'Allow' | 'Deny';
  policies: {
    name: string;
    /** Any of them matches; absent: any client. Exactly one of the fields per entry. */
    principals?: { directRemoteIp?: string; remoteIp?: string; header?: HeaderMatchSpec }[];
    /** Any of them matches; absent: any request. Exactly one of the fields per entry. */
    permissions?: { any?: boolean; header?: HeaderMatchSpec }[];
  }[];
}

/** JWT authentication (Envoy's jwt_authn): a request must carry a token one of the providers verifies. */
export interface JwtSpec {
  providers: {
    name: string;
    issuer?: string;
    audiences?: string[];
    /** Exactly one of inline (a JWKS document) and remote (served by a Service). */
    jwks: {
      inline?: string;
      remote?: { backendRef: { name: string; namespace?: string; port: number }; path: string; cacheDuration?: string };
    };
    claimToHeaders?: { claim: string; header: string }[];
    /** Keep the Authorization header on the request sent upstream (default: removed, as Envoy's `forward: false`). */
    forward?: boolean;
  }[];
}

export interface BufferSpec {
  maxRequestBytes: number;
}

export interface CompressionSpec {
  /** Responses smaller than this (content-length) go uncompressed; default 30 (Envoy's). */
  minContentLength?: number;
  /** Content types compressed; default Envoy's list (text/html, application/json, ...). */
  contentTypes?: string[];
}

/** Header templates: values use Envoy's command operators (`%REQ(x-user)%`, `%DOWNSTREAM_REMOTE_ADDRESS%`). */
export interface HeaderTemplatesSpec {
  set?: { name: string; value: string }[];
  add?: { name: string; value: string }[];
  remove?: string[];
}

export interface TransformationSpec {
  request?: HeaderTemplatesSpec;
  response?: HeaderTemplatesSpec;
}

export interface PolicyFieldsSpec {
  rbac?: RbacSpec;
  jwt?: JwtSpec;
  buffer?: BufferSpec;
  compression?: CompressionSpec;
  transformation?: TransformationSpec;
}
