// Golden tests: resources YAML in → per-Gateway IR, xDS resources and statuses out, through the same pipeline the
// control plane runs. Each folder of testdata/ holds input.yaml (a first line `# validation: off` switches the
// validation mode) and the expected ir.json (private keys redacted), xds.json (as on the wire) and status.json. `UPDATE_GOLDEN=1` rewrites the expectations;
// review the diff. Every xDS resource must also be canonical proto JSON of its Envoy type.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { packAny, unpackAny } from '../shared/envoy/protojson.ts';
import { redactSecrets } from '../shared/envoy/redact.ts';
import { translateYaml } from './offline.ts';

const DIR = new URL('./testdata/', import.meta.url).pathname;
const UPDATE = process.env.UPDATE_GOLDEN === '1';

const cases = readdirSync(DIR, { withFileTypes: true })
  .filter((d) => d.isDirectory() && existsSync(join(DIR, d.name, 'input.yaml')))
  .map((d) => d.name)
  .sort();

function golden(dir: string, file: string, actual: unknown) {
  const path = join(dir, file);
  const text = JSON.stringify(actual, null, 2) + '\n';
  if (UPDATE || !existsSync(path)) {
    writeFileSync(path, text);
    if (!UPDATE) throw new Error(`${path} did not exist; written. Review it and re-run.`);
    return;
  }
  expect(JSON.parse(text), `${file} (UPDATE_GOLDEN=1 to accept the new output)`).toEqual(
    JSON.parse(readFileSync(path, 'utf8')),
  );
}

describe('golden translation', () => {
  it('has cases', () => expect(cases.length).toBeGreaterThan(0));
  for (const name of cases) {
    it(name, () => {
      const dir = join(DIR, name);
      const input = readFileSync(join(dir, 'input.yaml'), 'utf8');
      const mode = /^#\s*validation:\s*off/m.test(input.split('\n')[0]) ? 'off' : 'strict';
      const out = translateYaml(input, { mode });
      for (const [role, snap] of Object.entries(out.xds)) {
        for (const r of [...snap.listeners, ...snap.routes, ...snap.clusters, ...snap.endpoints]) {
          // What goes on the wire (an Any) decodes back to exactly this JSON.
          expect(unpackAny(packAny(r)), `${role}: ${String(r['@type'])} ${String(r.name ?? r.cluster_name)}`).toEqual(
            r,
          );
        }
      }
      golden(dir, 'ir.json', redactSecrets(out.ir));
      golden(dir, 'xds.json', out.xds);
      golden(dir, 'status.json', out.status);
    });
  }
});
