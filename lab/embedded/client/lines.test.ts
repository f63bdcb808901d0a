// LineSplitter: whole lines from chunks, wherever the chunks are cut (inside a UTF-8 character too).
import { describe, expect, it } from 'vitest';
import { LineSplitter } from './lines.ts';

function split(chunks: Buffer[]): string[] {
  const s = new LineSplitter();
  return chunks.flatMap((c) => s.push(c));
}

describe('LineSplitter', () => {
  it('returns each line once its newline arrives, several per chunk or one over many', () => {
    expect(split([Buffer.from('a\nbb\nc'), Buffer.from('cc'), Buffer.from('c\n\nd')])).toEqual(['a', 'bb', 'cccc', '']);
  });

  it('decodes a character cut between two chunks', () => {
    const text = '{"name":"café ✓ 🎉"}\n';
    const bytes = Buffer.from(text);
    for (let cut = 1; cut < bytes.length; cut++) {
      expect(split([bytes.subarray(0, cut), bytes.subarray(cut)]), `cut at byte ${cut}`).toEqual([text.slice(0, -1)]);
    }
  });

  it('joins a long line from one-byte chunks', () => {
    const line = 'x'.repeat(5000);
    const bytes = Buffer.from(`${line}\n`);
    const chunks = [...bytes].map((b) => Buffer.from([b]));
    expect(split(chunks)).toEqual([line]);
  });
});
