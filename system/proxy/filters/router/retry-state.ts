// What a route's retry policy retries (Envoy's RetryStateImpl, source/common/router/retry_state_impl.cc): which
// response codes and which resets (connection failures, per-try timeouts) its retry_on names, and the jittered
// exponential back-off between tries. Pure functions of the compiled RetryPolicy.
import type { RetryPolicy } from '../../config/route.ts';

/** Whether an upstream response with this status is retried (5xx, gateway-error, retriable-4xx, listed codes). */
export function retriableStatus(policy: RetryPolicy, status: number): boolean {
  const on = policy.retryOn;
  if (on.has('5xx') && status >= 500) return true;
  if (on.has('gateway-error') && (status === 502 || status === 503 || status === 504)) return true;
  if (on.has('retriable-4xx') && status === 409) return true;
  if (on.has('retriable-status-codes') && policy.retriableStatusCodes.has(status)) return true;
  return false;
}

/** Whether a reset (or a per-try timeout) is retried; a failed connection also with connect-failure. */
export function retryOnReset(policy: RetryPolicy, connectFailure: boolean): boolean {
  const on = policy.retryOn;
  if (on.has('5xx') || on.has('gateway-error') || on.has('reset')) return true;
  return connectFailure && on.has('connect-failure');
}

/** The wait before retry number `retry` (0-based): random in [0, min(max, base * 2^retry)). */
export function backoffMs(policy: RetryPolicy, retry: number): number {
  const ceiling = Math.min(policy.maxIntervalMs, policy.baseIntervalMs * 2 ** retry);
  return Math.floor(Math.random() * ceiling);
}
