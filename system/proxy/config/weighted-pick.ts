// The one weighted random choice of the proxy: the router's weighted_clusters and tcp_proxy's weighted_clusters pick
// a cluster the same way Envoy does (a random point in [0, total), the first entry whose cumulative weight passes it).

/** An entry of `items` chosen with probability weight/total (`total` defaults to the sum of the weights). */
export function pickWeighted<T extends { weight: number }>(items: readonly T[], total?: number): T {
  if (items.length === 1) return items[0];
  let point = Math.random() * (total ?? items.reduce((a, c) => a + c.weight, 0));
  for (const it of items) {
    if (point < it.weight) return it;
    point -= it.weight;
  }
  return items[items.length - 1];
}
