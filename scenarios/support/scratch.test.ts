// scratchRoot: a tmpfs with room when there is one, else the temporary folder.
import { statfsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { describe, expect, it } from 'vitest';
import { scratchRoot } from './scratch.ts';

describe('scratchRoot', () => {
  it('falls back to the temporary folder for a missing folder, one that is not a tmpfs, or one too full', () => {
    expect(scratchRoot({ dir: '/nonexistent-gwlab' })).toBe(tmpdir());
    expect(scratchRoot({ dir: '/proc' })).toBe(tmpdir());
    expect(scratchRoot({ dir: '/dev/shm', minFreeBytes: Number.MAX_SAFE_INTEGER })).toBe(tmpdir());
  });

  it('uses /dev/shm when it is a tmpfs with room', () => {
    let tmpfs = false;
    try {
      tmpfs = statfsSync('/dev/shm').type === 0x01021994;
    } catch {}
    expect(scratchRoot({ minFreeBytes: 1 })).toBe(tmpfs ? '/dev/shm' : tmpdir());
  });
});
