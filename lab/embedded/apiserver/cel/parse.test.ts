// parse.ts: one parsed tree per expression text, shared by every rule with that text; a rule that does not parse
// throws every time, with parse's message.
import { parse } from '@bufbuild/cel';
import { describe, expect, it } from 'vitest';
import { parseCel } from './parse.ts';

describe('parseCel', () => {
  it('returns the tree parse returns, the same object for the same text', () => {
    const text = "self.all(r, r.name != '' && size(r.name) <= 63)";
    const a = parseCel(text);
    expect(a).toEqual(parse(text));
    expect(parseCel(text)).toBe(a);
    expect(parseCel(`${text} `)).not.toBe(a);
  });

  it('throws for a text that does not parse, each time', () => {
    expect(() => parseCel('self.x ==')).toThrow(/<input>:1:8: found = but expecting/);
    expect(() => parseCel('self.x ==')).toThrow(/<input>:1:8: found = but expecting/);
  });
});
