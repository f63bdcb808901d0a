// bench:apiserver's CEL phase (issue 18): HTTPRoute creates/s with the CRD's CEL rules on and off in the same run,
// and what CEL costs per create. "On" is the vendored Gateway API v1.6.1 standard HTTPRoute CRD as users install it;
// "off" is the same CRD with every x-kubernetes-validations removed, served under another group
// (nocel.gateway.networking.k8s.io) so both are installed side by side. Rounds alternate off/on so that machine load
// hits both alike. The CEL cost per create is the difference of the server's CPU per create, and, as a check, the
// rules alone evaluated in this process (validateRules on the same route, no HTTP or storage; CPU time).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import YAML from 'yaml';
import { compileSchema } from '../../lab/embedded/apiserver/cel/compile.ts';
import { validateRules } from '../../lab/embedded/apiserver/cel/validate.ts';
import { applyDefaults } from '../../lab/embedded/apiserver/crd.ts';
import { repoRoot } from '../shared/paths.ts';
import { cpuMs } from '../shared/proc.ts';
import { progress } from '../shared/reports.ts';
import type { ApiServer } from './server-process.ts';
import { CLIENTS } from './settings.ts';

const step = progress('apiserver');
/** HTTPRoutes created per round and per mode (BENCH_ROUTES overrides). */
export const ROUTES = Number(process.env.BENCH_ROUTES ?? 2000);
const ROUNDS = 2;

function stripRules(s: unknown): void {
  if (!s || typeof s !== 'object') return;
  if (Array.isArray(s)) {
    for (const x of s) stripRules(x);
    return;
  }
  delete (s as Record<string, unknown>)['x-kubernetes-validations'];
  for (const v of Object.values(s)) stripRules(v);
}

function httpRouteCrds(): { on: any; off: any } {
  const text = readFileSync(join(repoRoot, 'system/manifests/gateway-api/standard-install.yaml'), 'utf8');
  const on = YAML.parseAllDocuments(text)
    .map((d) => d.toJS())
    .find((d) => d?.kind === 'CustomResourceDefinition' && d.metadata.name === 'httproutes.gateway.networking.k8s.io');
  const off = structuredClone(on);
  stripRules(off.spec.versions);
  off.spec.group = 'nocel.gateway.networking.k8s.io';
  off.metadata = { name: 'httproutes.nocel.gateway.networking.k8s.io' };
  return { on, off };
}

/** A typical route: one parent, one hostname, two rules with path and header matches, a filter, a backend. */
export function route(group: string, name: string) {
  return {
    apiVersion: `${group}/v1`,
    kind: 'HTTPRoute',
    metadata: { name },
    spec: {
      parentRefs: [{ name: 'gw', sectionName: 'http' }],
      hostnames: ['app.example.com'],
      rules: [
        {
          matches: [{ path: { type: 'PathPrefix', value: '/api' }, headers: [{ name: 'x-env', value: 'canary' }] }],
          filters: [{ type: 'RequestHeaderModifier', requestHeaderModifier: { set: [{ name: 'x-a', value: 'b' }] } }],
          backendRefs: [{ name: 'api', port: 8080 }],
        },
        { matches: [{ path: { type: 'Exact', value: '/' } }], backendRefs: [{ name: 'web', port: 80, weight: 1 }] },
      ],
    },
  };
}

async function createRound(s: ApiServer, group: string, ns: string, from: number, n: number) {
  let next = from;
  const end = from + n;
  const cpu0 = cpuMs(s.child.pid!);
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (next < end) {
        const i = next++;
        await s.req('POST', `/apis/${group}/v1/namespaces/${ns}/httproutes`, route(group, `r-${i}`));
      }
    }),
  );
  return { sec: (performance.now() - t0) / 1000, cpuMs: cpuMs(s.child.pid!) - cpu0 };
}

export async function httpRouteCelPhase(s: ApiServer) {
  const { on, off } = httpRouteCrds();
  for (const crd of [on, off]) await s.req('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', crd);
  await s.req('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'routes' } });
  const totals = { on: { sec: 0, cpuMs: 0 }, off: { sec: 0, cpuMs: 0 } };
  for (let r = 0; r < ROUNDS; r++) {
    for (const [mode, group] of [
      ['off', off.spec.group],
      ['on', on.spec.group],
    ] as const) {
      step(`HTTPRoutes with CEL ${mode}: round ${r + 1}/${ROUNDS}, ${ROUTES} creates`);
      const x = await createRound(s, group, 'routes', r * ROUTES, ROUTES);
      totals[mode].sec += x.sec;
      totals[mode].cpuMs += x.cpuMs;
    }
  }
  const n = ROUTES * ROUNDS;
  // The rules alone, in this process, on the same route.
  const schema = on.spec.versions.find((v: any) => v.name === 'v1').schema.openAPIV3Schema;
  const rules = compileSchema(schema, 'spec.versions[0].schema.openAPIV3Schema').root;
  const obj = route('gateway.networking.k8s.io', 'r');
  // As the server validates it: after the schema's defaults.
  applyDefaults(schema, obj);
  for (let i = 0; i < 200; i++) validateRules(rules, obj);
  // CPU time (not wall time), comparable with the server's CPU per create on a loaded machine.
  const cpu0 = process.cpuUsage();
  const k = 2000;
  for (let i = 0; i < k; i++) validateRules(rules, obj);
  const cpu = process.cpuUsage(cpu0);
  const inProcessUs = (cpu.user + cpu.system) / k;
  return {
    routes: n,
    celOnPerSec: n / totals.on.sec,
    celOffPerSec: n / totals.off.sec,
    celOnServerUsPerCreate: (totals.on.cpuMs * 1000) / n,
    celOffServerUsPerCreate: (totals.off.cpuMs * 1000) / n,
    rulesInProcessUs: inProcessUs,
  };
}
