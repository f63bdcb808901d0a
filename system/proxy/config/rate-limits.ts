// RouteAction.rate_limits (envoy/config/route/v3/route_components.proto RateLimit), compiled: per entry its stage
// and actions, and the descriptor it makes for a request, as Envoy's RateLimitPolicyEntryImpl::populateDescriptors
// (source/common/router/router_ratelimit.cc) does: each action adds one entry; an action that cannot (a
// request_headers action whose header is absent, unless skip_if_absent) means no descriptor from that rate limit.
// Actions: remote_address (the downstream address), request_headers, generic_key (descriptor_key default
// `generic_key`), destination_cluster, request method via header_value_match is not implemented (NACKed).
import { ConfigError } from './errors.ts';

type J = Record<string, any>;

export interface DescriptorInput {
  header(name: string): string | undefined;
  /** The downstream address, without the port. */
  remoteAddress: string;
  /** The route's target cluster. */
  cluster: string | undefined;
}

type Entry = { key: string; value: string };
/** An action's entry, `null` to skip the action, `undefined` when the descriptor cannot be made. */
type Action = (i: DescriptorInput) => Entry | null | undefined;

export interface RateLimitEntry {
  stage: number;
  descriptor(i: DescriptorInput): Entry[] | undefined;
}

function compileAction(a: J, where: string): Action {
  if (a.remote_address !== undefined) return (i) => ({ key: 'remote_address', value: i.remoteAddress });
  if (a.generic_key !== undefined) {
    const g = a.generic_key as J;
    if (!g.descriptor_value)
      throw new ConfigError(`${where}.generic_key.descriptor_value: value length must be at least 1 characters`);
    const key = String(g.descriptor_key || 'generic_key');
    const value = String(g.descriptor_value);
    return () => ({ key, value });
  }
  if (a.request_headers !== undefined) {
    const h = a.request_headers as J;
    if (!h.header_name || !h.descriptor_key) {
      throw new ConfigError(`${where}.request_headers: header_name and descriptor_key are required`);
    }
    const name = String(h.header_name).toLowerCase();
    const key = String(h.descriptor_key);
    const skip = h.skip_if_absent === true;
    return (i) => {
      const v = i.header(name);
      if (v === undefined) return skip ? null : undefined;
      return { key, value: v };
    };
  }
  if (a.destination_cluster !== undefined) {
    return (i) => (i.cluster ? { key: 'destination_cluster', value: i.cluster } : undefined);
  }
  const kind = Object.keys(a).find((k) => k !== '@type') ?? 'action';
  throw new ConfigError(`${where}.${kind}: this rate limit action is not supported`);
}

export function compileRateLimits(list: J[] | undefined, where: string): RateLimitEntry[] | undefined {
  if (!list?.length) return undefined;
  return list.map((rl, i) => {
    const w = `${where}.rate_limits[${i}]`;
    const actions = ((rl.actions ?? []) as J[]).map((a, j) => compileAction(a, `${w}.actions[${j}]`));
    if (!actions.length) throw new ConfigError(`${w}.actions: value must contain at least 1 item(s)`);
    if (rl.limit !== undefined) throw new ConfigError(`${w}.limit: rate limit overrides are not supported`);
    return {
      stage: Number(rl.stage ?? 0),
      descriptor(input) {
        const out: Entry[] = [];
        for (const a of actions) {
          const e = a(input);
          if (e === undefined) return undefined;
          if (e !== null) out.push(e);
        }
        return out.length ? out : undefined;
      },
    };
  });
}
