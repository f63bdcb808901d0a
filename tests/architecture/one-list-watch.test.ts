// Issue 11 "one list-watch implementation": the list-then-watch loop of client-go's reflector lives in one file,
// system/shared/kube/list-watch.ts, which the embedded cluster's controllers and node agent (over KubeClient) and the
// control plane's informers (over client-node) both run. A second loop shows itself by what a loop must do and a
// one-off watch does not: ask for bookmarks (an `allowWatchBookmarks:` parameter; the API server's reading of it is
// no loop) or build client-node's informer (`makeInformer`, its `ListWatch`). Production code only; read from the
// checkout as the import rules are.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readTree } from './source-facts.ts';

const REPO = join(import.meta.dirname, '..', '..');
const THE_LOOP = 'system/shared/kube/list-watch.ts';
const LOOP_MARKS =
  /\ballowWatchBookmarks\s*:|\bmakeInformer\s*[<(]|import\s*\{[^}]*\bListWatch\b[^}]*\}\s*from\s*'@kubernetes\/client-node'/;

/** The files that hold a list-watch loop of their own. */
function listWatchLoops(files: Record<string, string>): string[] {
  return Object.entries(files)
    .filter(([, text]) => LOOP_MARKS.test(text))
    .map(([f]) => f)
    .sort();
}

describe('one list-watch implementation', () => {
  it(`only ${THE_LOOP} lists and watches (system/, lab/, scripts/, bench/, scenarios/support/)`, () => {
    const files = readTree(REPO, ['system', 'lab', 'scripts', 'bench', 'scenarios/support']);
    expect(listWatchLoops(files)).toEqual([THE_LOOP]);
  });

  it('finds a second loop by its bookmarks or by client-node informers', () => {
    expect(
      listWatchLoops({
        'lab/a.ts': 'await c.watch(p, { resourceVersion: rv, allowWatchBookmarks: true }, on, s);\n',
        'system/b.ts': 'const inf = makeInformer<any>(kc, path, listFn);\n',
        'system/c.ts': "import { KubeConfig, ListWatch, Watch } from '@kubernetes/client-node';\n",
        'lab/e.ts': "allowBookmarks: boolParam(q, 'allowWatchBookmarks'),\n",
        'lab/d.ts': "new Watch(kc).watch(path, { fieldSelector: 'metadata.name=x' }, notify, () => {});\n",
      }),
    ).toEqual(['lab/a.ts', 'system/b.ts', 'system/c.ts']);
  });
});
