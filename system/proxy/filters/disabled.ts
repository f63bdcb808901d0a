/** Marks a filter disabled on a route (FilterConfig.disabled, ExtAuthzPerRoute.disabled, ...). */
export const DISABLED = Object.freeze({ disabled: true as const });

/** FilterConfig with `disabled: false` and no config: enables a filter disabled in the HCM chain, nothing more. */
export const ENABLED = Object.freeze({ enabled: true as const });

export function isDisabled(v: unknown): boolean {
  return v === DISABLED;
}
