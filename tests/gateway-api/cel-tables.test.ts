// Upstream Gateway API's CEL test tables (kubernetes-sigs/gateway-api v1.6.1, tests/cel/*_test.go), transcribed by
// scripts/transcribe-gateway-api-cel.ts into cel-tables.json (each case keeps its upstream test function, name and
// expected error substrings), run as upstream runs them (tests/cel/main_test.go with envtest): the channel's CRDs
// installed; files with a `//go:build standard|experimental` tag only with that channel, the others with both; each
// object created (GatewayClass: created, then updated; `mutateStatus`: created, then its status updated); a case
// without expected errors must succeed, one with them must fail with every substring in the error
// (celErrorStringMatches: "more" may read "longer").
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, closeApiAgents } from '../../lab/embedded/apiserver/testing/requests.ts';
import type { TestLab } from '../../lab/embedded/apiserver/testing/test-lab.ts';
import { bundleCrds, type Channel, labWithGatewayApi } from './install.ts';

interface Case {
  untranscribed?: string;
  file: string;
  channels: string[];
  test: string;
  name: string;
  kind: string;
  object: { metadata: { name?: string; namespace?: string }; [k: string]: unknown };
  status?: unknown;
  update?: { metadata: object; [k: string]: unknown };
  wantErrors: string[];
}

const { cases } = JSON.parse(readFileSync(join(import.meta.dirname, 'cel-tables.json'), 'utf8')) as { cases: Case[] };

// The cases whose `rules` upstream builds in a Go closure with loops (the transcriber reads no loops), written here:
// `nRules` rules of `nMatches` copies of the closure's match each; the rest of the object is the test function's
// template, as another case of the same function has it.
const httpMatch = { path: { type: 'PathPrefix', value: '/' } };
const grpcMatch = {
  headers: [{ type: 'Exact', name: 'version', value: 'v1' }],
  method: { type: 'Exact', service: 'foo', method: 'bar' },
};
const LOOPS: Record<string, { match: object; nRules: number; nMatches: number }> = {
  'TestHTTPRouteRule/too many matches and rules': { match: httpMatch, nRules: 7, nMatches: 20 },
  'TestHTTPRouteRule/many matches and few rules': { match: httpMatch, nRules: 2, nMatches: 48 },
  'TestGRPCRouteRule/too many matches and rules': { match: grpcMatch, nRules: 7, nMatches: 20 },
  'TestGRPCRouteRule/many matches and few rules': { match: grpcMatch, nRules: 2, nMatches: 48 },
};
for (const c of cases) {
  const loop = LOOPS[`${c.test}/${c.name}`];
  if (!c.untranscribed || !loop) continue;
  const sibling = cases.find((o) => o.test === c.test && o.file === c.file && o.object);
  if (!sibling) continue;
  c.object = structuredClone(sibling.object);
  (c.object as any).spec.rules = Array.from({ length: loop.nRules }, () => ({
    matches: Array.from({ length: loop.nMatches }, () => structuredClone(loop.match)),
  }));
  delete c.untranscribed;
}

const celErrorStringMatches = (got: string, want: string) =>
  got.includes(want) || got.includes(want.replaceAll('more', 'longer'));

let seq = 0;

for (const channel of ['standard', 'experimental'] as Channel[]) {
  describe(`${channel} CRDs`, () => {
    let lab: TestLab;
    const crds = bundleCrds(channel);
    /** The API path of a kind: the CRD's v1 version if served, else its storage version. */
    const pathOf = (kind: string, namespace?: string) => {
      const crd = crds.find((c) => c.spec.names.kind === kind);
      const versions = crd.spec.versions.filter((v: any) => v.served);
      const v = (versions.find((x: any) => x.name === 'v1') ?? versions.find((x: any) => x.storage)).name;
      const ns = crd.spec.scope === 'Namespaced' ? `/namespaces/${namespace ?? 'default'}` : '';
      return {
        base: `/apis/${crd.spec.group}/${v}${ns}/${crd.spec.names.plural}`,
        apiVersion: `${crd.spec.group}/${v}`,
      };
    };
    beforeAll(async () => {
      lab = await labWithGatewayApi(channel);
    });
    afterAll(async () => {
      await closeApiAgents();
      await lab?.stop();
    });

    const mine = cases.filter((c) => c.channels.includes(channel));
    for (const [file, inFile] of Object.entries(Object.groupBy(mine, (c) => c.file))) {
      describe(file, () => {
        for (const c of (inFile ?? []).filter((x) => x.untranscribed))
          it.skip(`${c.test}/${c.name} (not transcribed: ${c.untranscribed})`, () => {});
        const runnable = (inFile ?? []).filter((x) => !x.untranscribed);
        it.each(runnable.map((c) => [`${c.test}/${c.name}`, c] as const))('%s', async (_n, c) => {
          const { base, apiVersion } = pathOf(c.kind, c.object.metadata.namespace);
          const name = `foo-${++seq}`;
          const obj = { ...structuredClone(c.object), apiVersion, kind: c.kind };
          obj.metadata = { ...obj.metadata, name };
          let r = await api(lab, 'POST', base, { body: obj });
          if (c.update || c.status !== undefined) {
            expect(r.status, r.text).toBe(201);
            const created = r.json;
            if (c.update)
              r = await api(lab, 'PUT', `${base}/${name}`, {
                body: { ...c.update, apiVersion, kind: c.kind, metadata: created.metadata },
              });
            else r = await api(lab, 'PUT', `${base}/${name}/status`, { body: { ...created, status: c.status } });
          }
          const failed = r.status >= 300;
          expect(failed, `want error: ${c.wantErrors.length > 0}; got ${r.status} ${r.text}`).toBe(
            c.wantErrors.length > 0,
          );
          const missing = c.wantErrors.filter((w) => !celErrorStringMatches(r.json?.message ?? '', w));
          expect(missing, r.json?.message).toEqual([]);
        });
      });
    }
  });
}
