// envoy.filters.http.header_mutation: request mutations on the decode path, response mutations on the encode path
// (Envoy's header_mutation.cc), in the order listed: `remove` a header, or `append` a HeaderValueOption (its
// append_action, its value a formatter template: config/headers.ts and config/formatter.ts, the ones routes use).
// The filter's own mutations run first, then those of the route's HeaderMutationPerRoute. `remove_on_match` and
// `most_specific_header_mutations_wins` are not supported (NACKed).
import { ConfigError } from '../config/errors.ts';
import { applyMutations, compileHeaderMutation, type HeaderMutation } from '../config/headers.ts';
import type { FilterFactory, J } from './filter-api.ts';

interface Mutations {
  request: HeaderMutation[];
  response: HeaderMutation[];
}

function compileList(list: J[] | undefined, where: string): HeaderMutation[] {
  return (list ?? []).map((m, i) => {
    const at = `${where}[${i}]`;
    if (m.remove !== undefined) return compileHeaderMutation([], [String(m.remove)], `${at}.remove`);
    if (m.append !== undefined) return compileHeaderMutation([m.append], [], `${at}.append`);
    if (m.remove_on_match !== undefined) throw new ConfigError(`${at}.remove_on_match: not supported`);
    throw new ConfigError(`${at}: value is required (one of remove, append)`);
  });
}

function compileMutations(m: J | undefined, where: string): Mutations {
  return {
    request: compileList(m?.request_mutations, `${where}.request_mutations`),
    response: compileList(m?.response_mutations, `${where}.response_mutations`),
  };
}

export const headerMutationFactory: FilterFactory = {
  canonicalName: 'envoy.filters.http.header_mutation',
  configTypes: ['envoy.extensions.filters.http.header_mutation.v3.HeaderMutation'],
  perRouteTypes: ['envoy.extensions.filters.http.header_mutation.v3.HeaderMutationPerRoute'],
  parsePerRoute: (c, where) => compileMutations(c.mutations, `${where}.mutations`),
  create(name, config) {
    if (config.most_specific_header_mutations_wins === true) {
      throw new ConfigError('header_mutation.most_specific_header_mutations_wins: not supported');
    }
    const base = compileMutations(config.mutations, 'header_mutation.mutations');
    return {
      name,
      decodeHeaders(s) {
        applyMutations(s.headers, base.request, s.info);
        const route = s.perFilterConfig<Mutations>(name);
        if (route) applyMutations(s.headers, route.request, s.info);
        return true;
      },
      encodeHeaders(s, _status, headers) {
        applyMutations(headers, base.response, s.info);
        const route = s.perFilterConfig<Mutations>(name);
        if (route) applyMutations(headers, route.response, s.info);
      },
    };
  },
};
