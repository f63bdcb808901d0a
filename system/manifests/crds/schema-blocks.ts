// The building blocks of the CRD schemas (structural OpenAPI v3, as apiextensions.k8s.io/v1 wants): scalar and
// container helpers, and the Gateway API's shared field types with their upstream constraints (names, hostnames,
// durations, conditions, label selectors, parent and backend references, header filters, path modifiers), used by
// the Gateway API kinds (gateway-api/) and the vendor kinds (vendor/) alike.

export type Schema = Record<string, unknown>;

export const str = (o: Schema = {}): Schema => ({ type: 'string', ...o });
export const int32 = (o: Schema = {}): Schema => ({ type: 'integer', format: 'int32', ...o });
export const bool = (o: Schema = {}): Schema => ({ type: 'boolean', ...o });
export const arr = (items: Schema, o: Schema = {}): Schema => ({ type: 'array', items, ...o });
export const strMap = (o: Schema = {}): Schema => ({ type: 'object', additionalProperties: { type: 'string' }, ...o });
export function obj(properties: Record<string, Schema>, required?: string[], o: Schema = {}): Schema {
  return { type: 'object', properties, ...(required?.length ? { required } : {}), ...o };
}
export const desc = (description: string, s: Schema): Schema => ({ description, ...s });

const DNS_SUBDOMAIN = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$';
export const group = () =>
  str({ maxLength: 253, pattern: '^$|^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$' });
export const kind = () => str({ minLength: 1, maxLength: 63, pattern: '^[a-zA-Z]([-a-zA-Z0-9]*[a-zA-Z0-9])?$' });
export const objectName = () => str({ minLength: 1, maxLength: 253 });
export const namespace = () => str({ minLength: 1, maxLength: 63, pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$' });
export const sectionName = () => str({ minLength: 1, maxLength: 253, pattern: DNS_SUBDOMAIN });
export const port = () => int32({ minimum: 1, maximum: 65535 });
export const hostname = () =>
  str({
    minLength: 1,
    maxLength: 253,
    pattern: '^(\\*\\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$',
  });
export const preciseHostname = () => str({ minLength: 1, maxLength: 253, pattern: DNS_SUBDOMAIN });
/** GEP-2257 durations, e.g. `10s`, `1m30s`, `500ms`. */
export const duration = () => str({ pattern: '^([0-9]{1,5}(h|m|s|ms)){1,4}$' });
export const controllerName = () =>
  str({
    minLength: 1,
    maxLength: 253,
    pattern: "^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\\/[A-Za-z0-9\\/\\-._~%!$&'()*+,;=:]+$",
  });
export const headerName = () => str({ minLength: 1, maxLength: 256, pattern: "^[A-Za-z0-9!#$%&'*+\\-.^_\\x60|~]+$" });

export const condition = (): Schema =>
  obj(
    {
      lastTransitionTime: str({ format: 'date-time' }),
      message: str({ maxLength: 32768 }),
      observedGeneration: { type: 'integer', format: 'int64', minimum: 0 },
      reason: str({ minLength: 1, maxLength: 1024, pattern: '^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$' }),
      status: str({ enum: ['True', 'False', 'Unknown'] }),
      type: str({
        maxLength: 316,
        pattern:
          '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$',
      }),
    },
    ['lastTransitionTime', 'message', 'reason', 'status', 'type'],
  );
export const conditions = (o: Schema = {}): Schema =>
  arr(condition(), { maxItems: 8, 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['type'], ...o });

export const labelSelector = (): Schema =>
  obj(
    {
      matchExpressions: arr(
        obj({ key: str(), operator: str(), values: arr(str(), { 'x-kubernetes-list-type': 'atomic' }) }, [
          'key',
          'operator',
        ]),
        { 'x-kubernetes-list-type': 'atomic' },
      ),
      matchLabels: strMap(),
    },
    undefined,
    { 'x-kubernetes-map-type': 'atomic' },
  );

export const parentReference = (): Schema =>
  obj(
    {
      group: { ...group(), default: 'gateway.networking.k8s.io' },
      kind: { ...kind(), default: 'Gateway' },
      namespace: namespace(),
      name: objectName(),
      sectionName: sectionName(),
      port: port(),
    },
    ['name'],
  );

export const backendObjectReference = (): Schema =>
  obj(
    {
      group: { ...group(), default: '' },
      kind: { ...kind(), default: 'Service' },
      name: objectName(),
      namespace: namespace(),
      port: port(),
    },
    ['name'],
  );

export const httpHeader = (): Schema =>
  obj({ name: headerName(), value: str({ minLength: 1, maxLength: 4096 }) }, ['name', 'value']);
export const headerFilter = (): Schema =>
  obj({
    set: arr(httpHeader(), { maxItems: 16, 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'] }),
    add: arr(httpHeader(), { maxItems: 16, 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'] }),
    remove: arr(str(), { maxItems: 16, 'x-kubernetes-list-type': 'set' }),
  });
export const pathModifier = (): Schema =>
  obj(
    {
      type: str({ enum: ['ReplaceFullPath', 'ReplacePrefixMatch'] }),
      replaceFullPath: str({ maxLength: 1024 }),
      replacePrefixMatch: str({ maxLength: 1024 }),
    },
    ['type'],
  );
