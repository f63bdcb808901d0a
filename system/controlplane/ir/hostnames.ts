// Hostname matching between listeners and routes (Gateway API): an exact name, or `*.suffix`, which matches any name
// with at least one more label in front of the suffix.

function wildcardMatches(wildcard: string, host: string): boolean {
  // `*.example.com` matches `a.example.com` and `a.b.example.com`, not `example.com`.
  const suffix = wildcard.slice(1); // `.example.com`
  return host.endsWith(suffix) && host.length > suffix.length;
}

/**
 * The hostnames a route serves on a listener: the intersection of the listener's hostname (none: any) with the
 * route's hostnames (none: the listener's). Empty when they do not intersect. `*` stands for "any host".
 */
export function intersectHostnames(listenerHost: string | undefined, routeHosts: string[]): string[] {
  if (!routeHosts.length) return [listenerHost || '*'];
  if (!listenerHost) return [...new Set(routeHosts)];
  const out = new Set<string>();
  for (const r of routeHosts) {
    const h = intersectOne(listenerHost, r);
    if (h) out.add(h);
  }
  return [...out];
}

function intersectOne(l: string, r: string): string | undefined {
  const lw = l.startsWith('*.');
  const rw = r.startsWith('*.');
  if (!lw && !rw) return l === r ? l : undefined;
  if (lw && !rw) return wildcardMatches(l, r) ? r : undefined;
  if (!lw && rw) return wildcardMatches(r, l) ? l : undefined;
  // Both wildcards: the longer (more specific) one, when it falls under the other.
  if (l === r) return l;
  if (l.length > r.length) return l.endsWith(r.slice(1)) ? l : undefined;
  return r.endsWith(l.slice(1)) ? r : undefined;
}

/** Do two sets of served hostnames (as intersectHostnames gives them; `*`: any) share a name? */
export function hostsOverlap(a: string[], b: string[]): boolean {
  return a.some((x) => b.some((y) => x === '*' || y === '*' || intersectOne(x, y) !== undefined));
}

/** `listener~<port>~<host with dots as underscores>`: the virtual host's name. */
export function virtualHostName(port: number, host: string): string {
  return `listener~${port}~${host.replace(/\./g, '_')}`;
}

/**
 * Listener isolation (Gateway API Listener docs, GatewayHTTPListenerIsolation): a request goes to the most specific
 * listener whose hostname matches it. Of the listener hostnames given (undefined: any host), the one that serves the
 * virtual host domain `domain` (an exact name, `*.suffix` or `*`): an exact match, else the longest wildcard covering
 * it, else the hostname-less listener; null when none covers it.
 */
export function mostSpecificListenerHost(
  listenerHosts: (string | undefined)[],
  domain: string,
): string | undefined | null {
  let best: string | undefined | null = null;
  const rank = (l: string | undefined) =>
    l === undefined ? 0 : l.startsWith('*.') ? l.length : Number.MAX_SAFE_INTEGER;
  for (const l of listenerHosts) {
    const covers =
      l === undefined ||
      l === domain ||
      (l.startsWith('*.') &&
        domain !== '*' &&
        (domain.startsWith('*.')
          ? domain.endsWith(l.slice(1)) && domain.length > l.length
          : wildcardMatches(l, domain)));
    if (covers && (best === null || rank(l) > rank(best))) best = l;
  }
  return best;
}

/**
 * Listener isolation as one route sees it on one listener (hostname `own`, undefined: none) of a port whose listeners
 * have the hostnames `listenerHosts`: of the hosts the route serves there (`routeHosts`, as intersectHostnames gives
 * them), the ones whose requests go to another, more specific listener of the port (mostSpecificListenerHost, the
 * rule the IR builder places entries by): a host it lists that such a listener owns (left out of its virtual hosts),
 * or such a listener's hostname inside a wildcard (or `*`) it serves (that listener's virtual host is the more
 * specific match). Each with the listener hostname that takes them.
 */
export function isolatedHosts(
  listenerHosts: (string | undefined)[],
  own: string | undefined,
  routeHosts: string[],
): { hosts: string; listenerHost: string }[] {
  const out: { hosts: string; listenerHost: string }[] = [];
  for (const other of new Set(listenerHosts)) {
    if (other === undefined || other === own) continue;
    for (const served of routeHosts) {
      const hosts = served === '*' ? other : intersectOne(served, other);
      if (hosts !== undefined && mostSpecificListenerHost(listenerHosts, hosts) === other) {
        out.push({ hosts, listenerHost: other });
        break;
      }
    }
  }
  return out;
}
