// Consistent-hash load balancing (Envoy's RingHashLoadBalancer and MaglevLoadBalancer, source/extensions/
// load_balancing_policies/{ring_hash,maglev}, docs arch_overview/upstream/load_balancing/load_balancers): a request's
// hash (the route's hash_policy, hash-policy.ts; none: a random one) picks the same host for as long as the host set
// is the same, and moves only the keys of a host that leaves. Ring hash: each host gets ring entries in proportion
// to its weight (ring_hash_lb_config minimum_ring_size 1024 .. maximum_ring_size 8M), the key `<address>_<i>`, and a
// request takes the first entry at or after its hash. Maglev: a 65537-entry lookup table filled from each host's
// (offset, skip) permutation, a request takes entry hash mod 65537 (host weights are not applied here). The hash
// function is SHA-256's first 64 bits (node:crypto) where Envoy uses xxHash64: which host a key lands on differs
// from Envoy's, the stickiness is the same.
import { hash64 } from '../config/hash-policy.ts';
import type { RingSpec } from './cluster-health-config.ts';
import type { Host } from './host.ts';

/** A table built for one candidate host set. */
interface Table {
  pick(hash: bigint): Host;
}

class Ring implements Table {
  private readonly hashes: bigint[] = [];
  private readonly hosts: Host[] = [];

  constructor(hosts: Host[], spec: RingSpec) {
    const total = hosts.reduce((s, h) => s + h.weight, 0);
    const minWeight = Math.min(...hosts.map((h) => h.weight / total));
    // Envoy: scale so the lightest host gets at least one entry, up to maximum_ring_size.
    const size = Math.min(Math.ceil(minWeight * spec.minimumRingSize) / minWeight, spec.maximumRingSize);
    const entries: Array<[bigint, Host]> = [];
    for (const h of hosts) {
      const n = Math.max(1, Math.round((size * h.weight) / total));
      for (let i = 0; i < n; i++) entries.push([hash64(`${h.key}_${i}`), h]);
    }
    entries.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    for (const [k, h] of entries) {
      this.hashes.push(k);
      this.hosts.push(h);
    }
  }

  pick(hash: bigint): Host {
    let lo = 0;
    let hi = this.hashes.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.hashes[mid]! < hash) lo = mid + 1;
      else hi = mid;
    }
    return this.hosts[lo === this.hashes.length ? 0 : lo]!;
  }
}

const MAGLEV_SIZE = 65537;

class Maglev implements Table {
  private readonly table: Host[] = new Array(MAGLEV_SIZE);

  constructor(hosts: Host[]) {
    const perms = hosts.map((h) => {
      const offset = Number(hash64(`${h.key}`) % BigInt(MAGLEV_SIZE));
      const skip = Number(hash64(`${h.key}#skip`) % BigInt(MAGLEV_SIZE - 1)) + 1;
      return { h, offset, skip, next: 0 };
    });
    let filled = 0;
    while (filled < MAGLEV_SIZE) {
      for (const p of perms) {
        let c = (p.offset + p.next * p.skip) % MAGLEV_SIZE;
        while (this.table[c] !== undefined) {
          p.next++;
          c = (p.offset + p.next * p.skip) % MAGLEV_SIZE;
        }
        this.table[c] = p.h;
        p.next++;
        if (++filled === MAGLEV_SIZE) break;
      }
    }
  }

  pick(hash: bigint): Host {
    return this.table[Number(hash % BigInt(MAGLEV_SIZE))]!;
  }
}

/** The consistent-hash picker of a cluster: its table rebuilt when the candidate host set changes. */
export class HashPicker {
  private readonly kind: 'RING_HASH' | 'MAGLEV';
  private readonly ring: RingSpec;
  private built: { key: string; table: Table } | undefined;

  constructor(kind: 'RING_HASH' | 'MAGLEV', ring: RingSpec) {
    this.kind = kind;
    this.ring = ring;
  }

  pick(candidates: Host[], hash: bigint | undefined): Host {
    const key = candidates.map((h) => `${h.key}/${h.weight}`).join(',');
    if (this.built?.key !== key) {
      const table = this.kind === 'MAGLEV' ? new Maglev(candidates) : new Ring(candidates, this.ring);
      this.built = { key, table };
    }
    const h = hash ?? BigInt.asUintN(64, BigInt(Math.floor(Math.random() * 2 ** 53)) << 11n);
    return this.built.table.pick(h);
  }
}
