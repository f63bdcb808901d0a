// decodeBody (decode.ts): an apply-patch+yaml body that is JSON (what client-node and kubectl send) is read by
// JSON.parse, not by the yaml package's parser (~0.3 s of the lab process's CPU for lab:up's applies, issue 14), to
// the same object, also when string values hold `":` (the Gateway API CRDs' descriptions, issue 18); what only the YAML parser reads as the API server always did (sigs.k8s.io/yaml: JSON is YAML) still
// goes to it, and a repeated key is still refused.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import YAML from 'yaml';
import { REPO_ROOT } from '../../../system/image.ts';
import { decodeBody, jsonKeysInText } from './decode.ts';

const APPLY = 'application/apply-patch+yaml';
const decode = (text: string) => decodeBody(Buffer.from(text), APPLY);

afterEach(() => {
  vi.restoreAllMocks();
});

describe('decodeBody of a YAML body', () => {
  it('reads a JSON body (the CRDs lab:up applies) without the YAML parser, to the object the YAML parser gives', () => {
    const text = readFileSync(join(REPO_ROOT, 'system/manifests/crds/gwvendor.yaml'), 'utf8');
    const docs = YAML.parseAllDocuments(text).map((d) => JSON.stringify(d.toJSON()));
    const expected = docs.map((d) => YAML.parse(d));
    const parse = vi.spyOn(YAML, 'parse');
    expect(docs.map(decode)).toEqual(expected);
    expect(parse).not.toHaveBeenCalled();
  });

  it('reads the Gateway API bundle\'s CRDs, whose descriptions hold `":`, without the YAML parser too', () => {
    const text = readFileSync(join(REPO_ROOT, 'system/manifests/gateway-api/standard-install.yaml'), 'utf8');
    const docs = YAML.parseAllDocuments(text)
      .map((d) => d.toJSON())
      .filter((d) => d?.kind === 'CustomResourceDefinition')
      .map((d) => JSON.stringify(d));
    // Counting `":` in the text (the check before) sees more keys than there are in one of them (a description).
    expect(docs.filter((d) => (d.match(/"\s*:/g)?.length ?? 0) > jsonKeysInText(d)).length).toBeGreaterThan(0);
    const expected = docs.map((d) => YAML.parse(d));
    const parse = vi.spyOn(YAML, 'parse');
    expect(docs.map(decode)).toEqual(expected);
    expect(parse).not.toHaveBeenCalled();
  });

  it('gives YAML that is not JSON to the YAML parser; a `":` inside a JSON string is no key', () => {
    const parse = vi.spyOn(YAML, 'parse');
    expect(decode('{a: 1, "b": [x, y]}')).toEqual({ a: 1, b: ['x', 'y'] });
    expect(decode('kind: ConfigMap\n')).toEqual({ kind: 'ConfigMap' });
    expect(parse).toHaveBeenCalledTimes(2);
    expect(decode('{"kind": "ConfigMap", "data": {"k": "say \\":\\" here \\\\", "j": "\\"a\\" :"}}')).toEqual({
      kind: 'ConfigMap',
      data: { k: 'say ":" here \\', j: '"a" :' },
    });
    expect(parse).toHaveBeenCalledTimes(2);
  });

  it('refuses a repeated key as the YAML parser does, even in a JSON body', () => {
    for (const body of [
      '{"kind": "ConfigMap", "kind": "Secret"}',
      '{"a": {"b": 1, "b" : 2}}',
      '{"a": "x\\"", "a": 1}',
    ]) {
      expect(() => decode(body)).toThrow(/could not be decoded as YAML: Map keys must be unique/);
    }
  });
});
