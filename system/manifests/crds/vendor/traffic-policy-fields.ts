// The CRD schema of the TrafficPolicy fields of issue 13 item 4 (rbac, jwt, buffer, compression, transformation),
// spread into traffic-policy.ts's spec. Enums, patterns and CEL one-of rules refuse bad input at the API server with
// a Status naming the field; what a schema cannot check (a JWKS document, a regex, a formatter template) is a
// TrafficPolicy condition (ir/policy-<field>.ts). Shapes follow Envoy's protos (config.rbac.v3, jwt_authn.v3,
// buffer.v3, compressor.v3, header_mutation.v3) and kgateway's / Envoy Gateway's TrafficPolicy/SecurityPolicy.
import {
  arr,
  bool,
  desc,
  duration,
  headerName,
  int32,
  namespace,
  obj,
  objectName,
  port,
  type Schema,
  str,
} from '../schema-blocks.ts';

const cel = (rule: string, message: string) => ({ 'x-kubernetes-validations': [{ rule, message }] });

/** Exactly one of `keys` is set. */
const oneOf = (keys: string[]) =>
  cel(
    `[${keys.map((k) => `has(self.${k})`).join(', ')}].filter(x, x).size() == 1`,
    `exactly one of ${keys.join(', ')}`,
  );

const cidr = () =>
  str({ minLength: 1, maxLength: 64, ...cel('isCIDR(self)', 'must be a CIDR such as 10.0.0.0/8 or 2001:db8::/32') });

export const headerMatch = (): Schema =>
  obj(
    {
      name: headerName(),
      exact: str({ maxLength: 4096 }),
      prefix: str({ minLength: 1, maxLength: 4096 }),
      regex: desc('An RE2 regular expression the whole value must match.', str({ minLength: 1, maxLength: 1024 })),
      present: bool(),
    },
    ['name'],
    oneOf(['exact', 'prefix', 'regex', 'present']),
  );

const rbac = (): Schema =>
  desc(
    "Role-based access control (Envoy's RBAC filter): Allow lets only requests some policy matches through, Deny " +
      'refuses them (403 `RBAC: access denied`). A policy matches when one of its principals and one of its ' +
      'permissions match (absent: any).',
    obj(
      {
        action: str({ enum: ['Allow', 'Deny'] }),
        policies: arr(
          obj(
            {
              name: str({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9][-A-Za-z0-9_.]*$' }),
              principals: arr(
                obj(
                  {
                    directRemoteIp: desc('The connection peer address is in this CIDR.', cidr()),
                    remoteIp: desc('The client address (x-forwarded-for, as Envoy reads it) is in this CIDR.', cidr()),
                    header: headerMatch(),
                  },
                  [],
                  oneOf(['directRemoteIp', 'remoteIp', 'header']),
                ),
                { minItems: 1, maxItems: 64 },
              ),
              permissions: arr(
                obj({ any: bool({ enum: [true] }), header: headerMatch() }, [], oneOf(['any', 'header'])),
                { minItems: 1, maxItems: 64 },
              ),
            },
            ['name'],
          ),
          { minItems: 1, maxItems: 32, 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'] },
        ),
      },
      ['action', 'policies'],
    ),
  );

const jwt = (): Schema =>
  desc(
    "JWT authentication (Envoy's jwt_authn): a request needs a bearer token (Authorization header) one of the " +
      'providers verifies; missing or invalid: 401 (`Jwt is missing`, `Jwt is expired`, ...), audience not allowed: 403.',
    obj(
      {
        providers: arr(
          obj(
            {
              name: str({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9][-A-Za-z0-9_.]*$' }),
              issuer: str({ minLength: 1, maxLength: 1024 }),
              audiences: arr(str({ minLength: 1, maxLength: 1024 }), { maxItems: 32 }),
              jwks: obj(
                {
                  inline: desc('A JSON Web Key Set document.', str({ minLength: 1, maxLength: 65536 })),
                  remote: obj(
                    {
                      backendRef: obj({ name: objectName(), namespace: namespace(), port: port() }, ['name', 'port']),
                      path: str({ minLength: 1, maxLength: 1024, pattern: '^/' }),
                      cacheDuration: duration(),
                    },
                    ['backendRef', 'path'],
                  ),
                },
                [],
                oneOf(['inline', 'remote']),
              ),
              claimToHeaders: arr(
                obj({ claim: str({ minLength: 1, maxLength: 256 }), header: headerName() }, ['claim', 'header']),
                { maxItems: 32 },
              ),
              forward: desc('Keep the token on the request sent upstream (default: removed).', bool()),
            },
            ['name', 'jwks'],
          ),
          { minItems: 1, maxItems: 16, 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'] },
        ),
      },
      ['providers'],
    ),
  );

const buffer = (): Schema =>
  desc(
    "Buffers whole requests up to maxRequestBytes (Envoy's buffer filter); a larger one is answered 413.",
    obj({ maxRequestBytes: int32({ minimum: 1 }) }, ['maxRequestBytes']),
  );

const compression = (): Schema =>
  desc(
    "gzip-compresses responses for clients that accept it (Envoy's compressor filter with the gzip library): " +
      'at least minContentLength bytes (default 30), of the contentTypes (default: Envoy list of text, JSON, XML, JS...).',
    obj({
      minContentLength: int32({ minimum: 0 }),
      contentTypes: arr(
        str({ minLength: 3, maxLength: 128, pattern: '^[A-Za-z0-9!#$&^_.+-]+/[A-Za-z0-9!#$&^_.+-]+$' }),
        {
          maxItems: 32,
        },
      ),
    }),
  );

const headerTemplates = (): Schema =>
  obj({
    set: arr(obj({ name: headerName(), value: str({ maxLength: 4096 }) }, ['name', 'value']), { maxItems: 32 }),
    add: arr(obj({ name: headerName(), value: str({ maxLength: 4096 }) }, ['name', 'value']), { maxItems: 32 }),
    remove: arr(headerName(), { maxItems: 32 }),
  });

const transformation = (): Schema =>
  desc(
    'Request and response header templates: values use Envoy command operators (%REQ(x-user)%, ' +
      '%DOWNSTREAM_REMOTE_ADDRESS%, %START_TIME%...).',
    obj({ request: headerTemplates(), response: headerTemplates() }),
  );

/** The fields, by name, in POLICY_FIELDS order. */
export function policyFieldSchemas(): Record<string, Schema> {
  return {
    rbac: rbac(),
    jwt: jwt(),
    buffer: buffer(),
    compression: compression(),
    transformation: transformation(),
  };
}
