// Resolver search-path semantics of a Kubernetes pod (resolv.conf `search ...` + `options ndots:5`), as glibc applies
// them: names with fewer than ndots dots try the search domains first, others try the name as given first; a trailing
// dot means "absolute". Pure, so the hook and the tests share it. No imports: the hook loads it into every pod.

export interface SearchOptions {
  search: string[];
  ndots: number;
  clusterDomain: string;
}

export interface Candidate {
  fqdn: string;
  /** Within the cluster domain: asked to the cluster DNS server; otherwise to the system resolver. */
  cluster: boolean;
}

export function inDomain(name: string, domain: string): boolean {
  return name === domain || name.endsWith('.' + domain);
}

export function searchCandidates(name: string, opts: SearchOptions): Candidate[] {
  const lower = name.toLowerCase();
  const mk = (fqdn: string): Candidate => ({ fqdn, cluster: inDomain(fqdn, opts.clusterDomain) });
  if (lower.endsWith('.')) return [mk(lower.slice(0, -1))];
  // A name already inside the cluster domain is tried as given first. glibc would try the search list first (4 dots <
  // ndots 5), but `<svc>.<ns>.svc.cluster.local.<search>` can never exist, so this only saves three round trips.
  if (inDomain(lower, opts.clusterDomain)) return [mk(lower), ...opts.search.map((s) => mk(`${lower}.${s}`))];
  const dots = lower.split('.').length - 1;
  const searched = opts.search.map((s) => mk(`${lower}.${s}`));
  return dots >= opts.ndots ? [mk(lower), ...searched] : [...searched, mk(lower)];
}

export function isLocalhostName(name: string): boolean {
  const n = name.toLowerCase().replace(/\.$/, '');
  return n === 'localhost' || n.endsWith('.localhost') || n === 'localhost.localdomain';
}
