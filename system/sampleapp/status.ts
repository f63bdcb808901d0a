// `/status/{codes}`: one code, or a weighted choice `200:3,500:1` (go-httpbin also accepts fractions, `200:0.7,503:0.3`,
// and entries without a weight, which count 1).

export interface WeightedCode {
  code: number;
  weight: number;
}

export class StatusSpecError extends Error {}

/** Parses `/status/` path values. Throws StatusSpecError naming the bad entry. */
export function parseStatusSpec(spec: string): WeightedCode[] {
  if (spec === '') throw new StatusSpecError('missing status code: use /status/200 or /status/200:3,500:1');
  const out: WeightedCode[] = [];
  for (const entry of spec.split(',')) {
    const colon = entry.indexOf(':');
    const codeText = colon < 0 ? entry : entry.slice(0, colon);
    const code = Number(codeText);
    // 1xx cannot be a final response, so httpbin's 100-599 becomes 200-599 here.
    if (!/^\d{3}$/.test(codeText) || code < 200 || code > 599) {
      throw new StatusSpecError(`invalid status code ${JSON.stringify(codeText)}: use a code from 200 to 599`);
    }
    let weight = 1;
    if (colon >= 0) {
      const wText = entry.slice(colon + 1);
      weight = Number(wText);
      if (wText === '' || !Number.isFinite(weight) || weight < 0) {
        throw new StatusSpecError(`invalid weight ${JSON.stringify(wText)} for ${code}: use a number >= 0`);
      }
    }
    out.push({ code, weight });
  }
  if (out.reduce((s, c) => s + c.weight, 0) <= 0) {
    throw new StatusSpecError('the weights add up to 0: give at least one code a positive weight');
  }
  return out;
}

/** Picks a code with probability weight/total; `random` is in [0, 1). */
export function chooseStatus(choices: readonly WeightedCode[], random: number = Math.random()): number {
  if (choices.length === 1) return choices[0].code;
  const total = choices.reduce((s, c) => s + c.weight, 0);
  let r = random * total;
  for (const c of choices) {
    if (r < c.weight) return c.code;
    r -= c.weight;
  }
  // Rounding can leave r just above the last bucket: return the last code with a positive weight.
  for (let i = choices.length - 1; i >= 0; i--) if (choices[i].weight > 0) return choices[i].code;
  return choices[choices.length - 1].code;
}
