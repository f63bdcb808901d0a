// Bookkeeping every xDS resource manager shares (clusters, listeners, route configurations): the rejected update
// kept per resource for config_dump's `error_state` (Envoy's UpdateFailureState), whether an update changes a
// resource, and the hash of a version_info that Envoy exports as the `version` gauges.

type J = Record<string, any>;

/** envoy.admin.v3.UpdateFailureState: the last rejected update of one resource, as config_dump shows it. */
export interface ErrorState {
  failed_configuration: J;
  last_update_attempt: string;
  details: string;
  version_info: string;
}

/** The error_state of a rejected resource: its JSON as an Any of `typeUrl`, why, when and in which version. */
export function errorState(typeUrl: string, json: J, details: string, version: string, now: string): ErrorState {
  return {
    failed_configuration: { '@type': typeUrl, ...json },
    last_update_attempt: now,
    details,
    version_info: version,
  };
}

/** Whether two resources (canonical JSON) are the same: one object, or the same JSON text. */
export function sameJson(a: unknown, b: unknown): boolean {
  return a === b || JSON.stringify(a) === JSON.stringify(b);
}

/** A stable number for a version string (Envoy exports a hash of version_info as the `version` gauge). */
export function versionHash(v: string): number {
  let h = 0x811c9dc5;
  let h2 = 0;
  for (let i = 0; i < v.length; i++) {
    h ^= v.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
    h2 = (h2 * 31 + v.charCodeAt(i)) % 2097152;
  }
  return h2 * 4294967296 + h;
}
