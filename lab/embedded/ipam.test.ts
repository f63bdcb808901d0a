// Address pools inside a lab's loopback ranges (ipam.ts): allocation without reuse until release, reserved and
// claimed addresses skipped, membership by range.
import { describe, expect, it } from 'vitest';
import { AddressPool } from './ipam.ts';

describe('address pool', () => {
  it('allocates without reuse until release, skipping reserved and claim addresses', () => {
    const pool = new AddressPool(130, ['127.130.0.1']);
    expect(pool.allocate()).toBe('127.130.0.2');
    expect(pool.allocate()).toBe('127.130.0.3');
    pool.release('127.130.0.2');
    expect(pool.claim('127.130.0.4')).toBe(true);
    expect(pool.allocate()).toBe('127.130.0.5');
    expect(pool.contains('127.131.0.1')).toBe(false);
  });
});
