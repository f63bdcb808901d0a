// The shipped CRDs: generated files up to date, structural schemas, and the Gateway API subset checked field by
// field against the maintained models on npm (@kubernetes-models/gateway-api): every field we ship exists upstream
// with the same JSON type, the same required fields, accepted enum values and the same bounds.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { CRD_FILES, renderCrdFile } from './generate.ts';
import { gatewayApiCrds, type Schema, vendorCrds } from './schemas.ts';

type AjvError = { instancePath: string; keyword: string; params: Record<string, any> };
type Validate = ((d: unknown) => boolean) & { errors?: AjvError[] | null };

const UPSTREAM: Record<string, string> = {
  GatewayClass: 'IoK8sSigsGatewayApiApisV1GatewayClass',
  Gateway: 'IoK8sSigsGatewayApiApisV1Gateway',
  HTTPRoute: 'IoK8sSigsGatewayApiApisV1HTTPRoute',
  ReferenceGrant: 'IoK8sSigsGatewayApiApisV1beta1ReferenceGrant',
};

async function upstreamValidator(kind: string): Promise<Validate> {
  const mod = await import(`@kubernetes-models/gateway-api/_schemas/${UPSTREAM[kind]}`);
  return mod.validate as Validate;
}

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

function setAt(path: Seg[], value: unknown): Record<string, unknown> {
  let v: unknown = value;
  for (let i = path.length - 1; i >= 0; i--) {
    const seg = path[i];
    v = seg === 0 ? [v] : { [seg]: v };
  }
  return v as Record<string, unknown>;
}

const pointer = (path: Seg[]) => '/' + path.join('/');
const wrongValue = (s: Schema): unknown => (s.type === 'string' ? 12345 : 'not-of-this-type');

function errorsAt(v: Validate, obj: unknown, path: Seg[]): AjvError[] {
  v(obj);
  return (v.errors ?? []).filter((e) => e.instancePath === pointer(path));
}

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
    for (const crd of [...gatewayApiCrds(), ...vendorCrds()] as any[]) {
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
    ]) {
      expect(tpSpec[f], f).toBeDefined();
    }
    const ext = (rootSchema(gwe) as any).properties.spec.properties.extAuth.properties;
    expect(Object.keys(ext)).toEqual(['httpService', 'failOpen', 'statusOnError']);
    expect(Object.keys(ext.httpService.properties.backendRef.properties)).toEqual(['name', 'namespace', 'port']);
  });
});

describe('Gateway API subset agrees with @kubernetes-models/gateway-api', () => {
  const crds = gatewayApiCrds() as any[];
  it('ships GatewayClass, Gateway, HTTPRoute (v1) and ReferenceGrant (v1beta1) at gateway.networking.k8s.io', () => {
    expect(crds.map((c) => `${c.spec.group}/${c.spec.versions[0].name}/${c.spec.names.kind}`)).toEqual([
      'gateway.networking.k8s.io/v1/GatewayClass',
      'gateway.networking.k8s.io/v1/Gateway',
      'gateway.networking.k8s.io/v1/HTTPRoute',
      'gateway.networking.k8s.io/v1beta1/ReferenceGrant',
    ]);
  });

  for (const crd of crds) {
    const kind = crd.spec.names.kind as string;
    describe(kind, () => {
      const nodes: { path: Seg[]; s: Schema }[] = [];
      for (const part of ['spec', 'status']) {
        const s = (rootSchema(crd) as any).properties[part] as Schema;
        if (s.properties) walk(s, [part], nodes);
      }

      it('every shipped field exists upstream with the same JSON type', async () => {
        const v = await upstreamValidator(kind);
        const missing: string[] = [];
        for (const { path, s } of nodes) {
          if (path.length === 1) continue;
          const errs = errorsAt(v, setAt(path, wrongValue(s)), path);
          if (!errs.some((e) => e.keyword === 'type')) missing.push(`${pointer(path)} (${String(s.type)})`);
        }
        expect(missing).toEqual([]);
        expect(nodes.length).toBeGreaterThan(kind === 'HTTPRoute' ? 80 : 8);
      });

      it('required fields are the upstream ones', async () => {
        const v = await upstreamValidator(kind);
        const diffs: string[] = [];
        for (const { path, s } of nodes) {
          if (s.type !== 'object' || !s.properties) continue;
          const ours = new Set((s.required as string[] | undefined) ?? []);
          const theirs = new Set(
            errorsAt(v, setAt(path, {}), path)
              .filter((e) => e.keyword === 'required')
              .map((e) => e.params.missingProperty as string)
              .filter((p) => Object.hasOwn(s.properties as object, p)),
          );
          const a = [...ours].sort().join(',');
          const b = [...theirs].sort().join(',');
          if (a !== b) diffs.push(`${pointer(path)}: ours [${a}] upstream [${b}]`);
        }
        expect(diffs).toEqual([]);
      });

      it('enum values are accepted upstream, and bounds (min/max, lengths, items) match', async () => {
        const v = await upstreamValidator(kind);
        const diffs: string[] = [];
        for (const { path, s } of nodes) {
          const at = pointer(path);
          // metav1.Condition comes from the Kubernetes OpenAPI in the models, which carries no bounds.
          if (path.includes('conditions') && path.at(-1) !== 'conditions') continue;
          for (const value of (s.enum as unknown[] | undefined) ?? []) {
            if (errorsAt(v, setAt(path, value), path).length) diffs.push(`${at}: upstream rejects ${String(value)}`);
          }
          const expectBound = (value: unknown, keyword: string, shouldFail: boolean) => {
            const failed = errorsAt(v, setAt(path, value), path).some((e) => e.keyword === keyword);
            if (failed !== shouldFail) diffs.push(`${at}: ${keyword} with ${JSON.stringify(value).slice(0, 40)}`);
          };
          if (typeof s.maximum === 'number') {
            expectBound(s.maximum, 'maximum', false);
            expectBound(s.maximum + 1, 'maximum', true);
          }
          if (typeof s.minimum === 'number') {
            expectBound(s.minimum, 'minimum', false);
            expectBound(s.minimum - 1, 'minimum', true);
          }
          if (typeof s.maxLength === 'number') expectBound('a'.repeat(s.maxLength + 1), 'maxLength', true);
          if (typeof s.minLength === 'number' && s.minLength > 0) expectBound('', 'minLength', true);
          if (typeof s.maxItems === 'number') {
            const item = (s.items as Schema).type === 'string' ? 'x' : {};
            expectBound(
              Array.from({ length: s.maxItems + 1 }, () => item),
              'maxItems',
              true,
            );
          }
        }
        expect(diffs).toEqual([]);
      });
    });
  }
});
