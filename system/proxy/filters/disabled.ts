/** Marks a filter disabled on a route (FilterConfig.disabled, ExtAuthzPerRoute.disabled, ...). */
export const DISABLED = Object.freeze({ disabled: true as const });

export function isDisabled(v: unknown): boolean {
  return v === DISABLED;
}
