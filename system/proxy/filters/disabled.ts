// The markers a per-route filter config compiles to when it only disables or enables a filter (FilterConfig,
// ExtAuthzPerRoute.disabled), shared by the registry, the filters and the stream's per-filter config lookup.
/** Marks a filter disabled on a route (FilterConfig.disabled, ExtAuthzPerRoute.disabled, ...). */
export const DISABLED = Object.freeze({ disabled: true as const });

/** FilterConfig with `disabled: false` and no config: enables a filter disabled in the HCM chain, nothing more. */
export const ENABLED = Object.freeze({ enabled: true as const });

export function isDisabled(v: unknown): boolean {
  return v === DISABLED;
}
