// TrafficPolicy `transformation` → envoy.filters.http.header_mutation: the filter (no mutations of its own) on a
// listener where some route transforms headers, and on that route HeaderMutationPerRoute with its request and
// response mutations: `set` overwrites (OVERWRITE_IF_EXISTS_OR_ADD), `add` appends (APPEND_IF_EXISTS_OR_ADD),
// `remove` removes; values are formatter templates the proxy evaluates per request. Shapes:
// header_mutation/v3/header_mutation.proto, config/common/mutation_rules/v3 HeaderMutation.
import type { HeaderOpsIR, RouteIR } from '../../ir/types.ts';
import type { Json } from './envoy.ts';

const NAME = 'envoy.filters.http.header_mutation';
const HEADER_MUTATION = 'type.googleapis.com/envoy.extensions.filters.http.header_mutation.v3.HeaderMutation';
const PER_ROUTE = 'type.googleapis.com/envoy.extensions.filters.http.header_mutation.v3.HeaderMutationPerRoute';

function mutations(ops: HeaderOpsIR | undefined): Json[] {
  if (!ops) return [];
  return [
    ...ops.remove.map((name) => ({ remove: name.toLowerCase() })),
    ...ops.set.map((h) => ({
      append: { header: { key: h.name, value: h.value }, append_action: 'OVERWRITE_IF_EXISTS_OR_ADD' },
    })),
    ...ops.add.map((h) => ({ append: { header: { key: h.name.toLowerCase(), value: h.value } } })),
  ];
}

export const headerMutationFilter = {
  forListener(routes: readonly RouteIR[]) {
    const used = routes.some((r) => r.policy.transformation);
    return {
      chain: used ? [{ name: NAME, typed_config: { '@type': HEADER_MUTATION } }] : [],
      perRoute(r: RouteIR): Json {
        const t = r.policy.transformation;
        if (!t) return {};
        const m: Json = {};
        const req = mutations(t.request);
        const res = mutations(t.response);
        if (req.length) m.request_mutations = req;
        if (res.length) m.response_mutations = res;
        return { [NAME]: { '@type': PER_ROUTE, mutations: m } };
      },
    };
  },
};
