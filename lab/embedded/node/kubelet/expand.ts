// Kubernetes' `$(VAR)` expansion for command, args and env values: `$(NAME)` becomes the value of NAME when it is
// defined and stays as written otherwise; `$$` is an escaped `$` (so `$$(NAME)` stays `$(NAME)`).

export function expandVars(input: string, lookup: (name: string) => string | undefined): string {
  let out = '';
  for (let i = 0; i < input.length; i++) {
    const ch = input[i];
    if (ch !== '$' || i + 1 >= input.length) {
      out += ch;
      continue;
    }
    const next = input[i + 1];
    if (next === '$') {
      out += '$';
      i++;
    } else if (next === '(') {
      const close = input.indexOf(')', i + 2);
      if (close === -1) {
        out += input.slice(i);
        break;
      }
      const name = input.slice(i + 2, close);
      const value = lookup(name);
      out += value === undefined ? input.slice(i, close + 1) : value;
      i = close;
    } else {
      out += ch;
    }
  }
  return out;
}

export function expandAll(list: string[] | undefined, env: Record<string, string>): string[] | undefined {
  return list?.map((s) => expandVars(s, (n) => (Object.hasOwn(env, n) ? env[n] : undefined)));
}
