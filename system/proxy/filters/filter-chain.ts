// An HCM's http_filters built into its filter chain, with Envoy's rules on the chain (FilterChainHelper::
// processFilters in source/common/http/filter_chain_helper.h and Config::Utility::validateTerminalFilters in
// source/common/config/utility.cc): entry by entry, the last entry may not be disabled by default, an unknown
// optional filter is skipped, and the terminal filter (envoy.filters.http.router) must be the last entry while no
// other filter may be last; the errors name the entry's name and its factory's name, in Envoy's words.
// One rule of this proxy's own: Envoy accepts a chain that ends without a terminal filter once optional filters
// are skipped (or an empty http_filters) and never answers its requests; this proxy rejects it.
import { ConfigError } from '../config/errors.ts';
import type { FilterContext, HttpFilter, J } from './filter-api.ts';
import { createFilter } from './registry.ts';

export interface FilterChain {
  /** The filters in order; the last is the terminal filter (the router). */
  filters: HttpFilter[];
  /** Per filter: `disabled: true` in the chain (runs only where a route's typed_per_filter_config enables it). */
  disabled: boolean[];
}

/** Builds http_filters; throws ConfigError (the NACK's reason) where Envoy rejects the chain. */
export function buildFilterChain(list: J[], ctx: FilterContext): FilterChain {
  const filters: HttpFilter[] = [];
  const disabled: boolean[] = [];
  let terminal = false;
  list.forEach((entry, i) => {
    const last = i === list.length - 1;
    const name = String(entry.name ?? '');
    if (!name) throw new ConfigError(`http_filters[${i}].name: value length must be at least 1 characters`);
    if (last && entry.disabled === true) {
      throw new ConfigError(`Error: the last (terminal) filter (${name}) in the chain cannot be disabled by default.`);
    }
    const made = createFilter(entry, `http_filters[${i}]`, ctx);
    if (!made) return; // an optional filter this proxy does not know
    if (made.terminal && !last) {
      throw new ConfigError(
        `Error: terminal filter named ${name} of type ${made.factoryName} must be the last filter in a http filter chain.`,
      );
    }
    if (!made.terminal && last) {
      throw new ConfigError(
        `Error: non-terminal filter named ${name} of type ${made.factoryName} is the last filter in a http filter chain.`,
      );
    }
    terminal = made.terminal;
    filters.push(made.filter);
    disabled.push(made.disabled);
  });
  if (!terminal) {
    throw new ConfigError(
      'Error: the http filter chain does not end with a terminal filter (envoy.filters.http.router): Envoy accepts ' +
        'such a chain and never answers its requests; this proxy rejects it.',
    );
  }
  return { filters, disabled };
}
