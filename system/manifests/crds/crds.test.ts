// The vendor CRDs the project generates: the file up to date, structural schemas, the vendor kinds' shape. (The
// Gateway API CRDs are upstream's, vendored unchanged: ../gateway-api.test.ts checks them.)
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { CRD_FILES, renderCrdFile } from './generate.ts';
import { type Schema, vendorCrds } from './schemas.ts';

function rootSchema(crd: any): Schema {
  return crd.spec.versions[0].schema.openAPIV3Schema;
}

type Seg = string | 0;
/** Every schema node under spec and status, with its path (arrays as index 0). */
function walk(s: Schema, path: Seg[], out: { path: Seg[]; s: Schema }[]) {
  out.push({ path, s });
  if (s.type === 'object' && s.properties) {
    for (const [k, v] of Object.entries(s.properties as Record<string, Schema>)) walk(v, [...path, k], out);
  }
  if (s.type === 'array' && s.items) walk(s.items as Schema, [...path, 0], out);
}

const pointer = (path: Seg[]) => '/' + path.join('/');

describe('CRD files', () => {
  for (const name of Object.keys(CRD_FILES) as (keyof typeof CRD_FILES)[]) {
    it(`${name} is what generate.ts writes (run: node system/manifests/crds/generate.ts)`, () => {
      const onDisk = readFileSync(new URL(`./${name}`, import.meta.url), 'utf8');
      expect(onDisk).toBe(renderCrdFile(name));
      const docs = parseAllDocuments(onDisk).map((d) => d.toJS());
      expect(docs.every((d) => d.kind === 'CustomResourceDefinition')).toBe(true);
    });
  }

  it('every schema is structural: a type on every node, items on arrays, no properties beside additionalProperties', () => {
    const problems: string[] = [];
    for (const crd of vendorCrds() as any[]) {
      const nodes: { path: Seg[]; s: Schema }[] = [];
      walk(rootSchema(crd), [], nodes);
      for (const { path, s } of nodes) {
        const at = `${crd.spec.names.kind} ${pointer(path)}`;
        const intOrString = s['x-kubernetes-int-or-string'] === true;
        if (!s.type && !intOrString) problems.push(`${at}: no type`);
        if (s.type === 'array' && !s.items) problems.push(`${at}: array without items`);
        if (s.properties && s.additionalProperties) problems.push(`${at}: properties and additionalProperties`);
        if (s.additionalProperties && typeof s.additionalProperties === 'object') {
          const a = s.additionalProperties as Schema;
          if (!a.type && !a['x-kubernetes-int-or-string']) problems.push(`${at}: map values without type`);
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it('vendor kinds: group, version and the logLevel enum with default info', () => {
    const [gwp, tp, gwe] = vendorCrds() as any[];
    for (const c of [gwp, tp, gwe]) {
      expect(c.spec.group).toBe('gateway.gwvendor.dev');
      expect(c.spec.versions.map((v: any) => v.name)).toEqual(['v1alpha1']);
      expect(c.spec.versions[0].subresources).toEqual({ status: {} });
    }
    expect([gwp, tp, gwe].map((c) => c.spec.names.kind)).toEqual([
      'GatewayParameters',
      'TrafficPolicy',
      'GatewayExtension',
    ]);
    const logLevel = rootSchema(gwp) as any;
    const ll =
      logLevel.properties.spec.properties.kube.properties.envoyContainer.properties.bootstrap.properties.logLevel;
    expect(ll.default).toBe('info');
    expect(ll.enum).toEqual(expect.arrayContaining(['trace', 'debug', 'info', 'warn', 'error', 'critical', 'off']));
    const tpSpec = (rootSchema(tp) as any).properties.spec.properties;
    for (const f of [
      'targetRefs',
      'targetSelectors',
      'timeouts',
      'retry',
      'cors',
      'headerModifiers',
      'rateLimit',
      'extAuth',
      'urlRewrite',
      'faultInjection',
      'extProc',
    ]) {
      expect(tpSpec[f], f).toBeDefined();
    }
    const ext = (rootSchema(gwe) as any).properties.spec.properties.extAuth.properties;
    expect(Object.keys(ext)).toEqual(['grpcService', 'httpService', 'failOpen', 'statusOnError']);
    expect(Object.keys(ext.httpService.properties.backendRef.properties)).toEqual(['name', 'namespace', 'port']);
    expect(Object.keys(ext.grpcService.properties)).toEqual(['backendRef', 'authority', 'timeout']);
    const gweSpec = (rootSchema(gwe) as any).properties.spec;
    expect(Object.keys(gweSpec.properties)).toEqual(['extAuth', 'rateLimit', 'extProc']);
    expect(gweSpec['x-kubernetes-validations'][0].message).toBe('set exactly one of extAuth, rateLimit and extProc');
    const extAuth = gweSpec.properties.extAuth;
    expect(extAuth['x-kubernetes-validations']).toEqual([
      {
        rule: 'has(self.httpService) != has(self.grpcService)',
        message: 'set exactly one of httpService and grpcService',
      },
    ]);
  });
});
