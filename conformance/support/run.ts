// One upstream conformance test as a vitest suite (upstream's suite.Run for one test): a describe named by its
// ShortName carrying its features in the task meta (the report reads them: support/reporter.ts), skipped when gwlab
// does not support every feature it names (utils/features.ts) or when GWLAB_CONFORMANCE_RUN names another test;
// before its cases, its manifests applied with the suite's GatewayClass; after them, deleted.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, inject, it } from 'vitest';
import { type KObj, Kube } from '../../lab/toolkit/kube.ts';
import { DEFAULT_TIMEOUT_CONFIG } from '../utils/config.ts';
import { isSupported } from '../utils/features.ts';
import {
  type GrpcExpectedResponse,
  grpcTestCaseName,
  makeGrpcRequestAndExpectEventuallyConsistentResponse,
} from '../utils/grpc.ts';
import {
  type ExpectedResponse,
  makeRequestAndExpectEventuallyConsistentResponse,
  testCaseName,
} from '../utils/http.ts';
import {
  type GatewayRef,
  gatewayAndRoutesMustBeAccepted,
  httpRouteMustHaveResolvedRefsConditionsTrue,
  type NN,
} from '../utils/kubernetes.ts';
import { expectMirroredRequest, type MirroredBackend, withRequestId } from '../utils/mirror.ts';
import { type ConformanceTest, readConformanceManifest, type Suite } from '../utils/suite.ts';

export interface ConformanceMeta {
  shortName: string;
  features: string[];
  provisional: boolean;
}

declare module 'vitest' {
  interface TaskMeta {
    conformance?: ConformanceMeta;
  }
}

/** GWLAB_CONFORMANCE_RUN: only this ShortName runs (upstream's --run-test); the others are skipped. */
export function selected(shortName: string, env: NodeJS.ProcessEnv = process.env): boolean {
  const only = env.GWLAB_CONFORMANCE_RUN;
  return !only || only === shortName;
}

export function runConformanceTest(ct: ConformanceTest): void {
  const meta: ConformanceMeta = { shortName: ct.shortName, features: ct.features, provisional: !!ct.provisional };
  const skip = !isSupported(ct.features) || !selected(ct.shortName);
  // Filled before the cases run; the cases read it then.
  const s = { timeoutConfig: DEFAULT_TIMEOUT_CONFIG } as Suite;
  describe(ct.shortName, { meta: { conformance: meta }, skip }, () => {
    let applied: KObj[] = [];
    beforeAll(async () => {
      const c = inject('conformance');
      Object.assign(s, {
        kube: Kube.fromFile(c.kubeconfig, c.context || undefined),
        controllerName: c.controllerName,
        gatewayClassName: c.gatewayClassName,
      });
      for (const m of ct.manifests) {
        const docs = readConformanceManifest(m, c);
        applied = [...applied, ...docs];
        await s.kube.apply(docs);
      }
    });
    afterAll(async () => {
      if (applied.length) await s.kube.delete(applied);
    });
    ct.test(s);
  });
}

/**
 * The request cases of a test (upstream's `t.Run(tc.GetTestCaseName(i), ...)` with MakeRequestAndExpectEventually-
 * ConsistentResponse), run side by side as upstream's parallel subtests; `addr` is the gateway address an earlier
 * case of the test found (GatewayAndHTTPRoutesMustBeAccepted).
 */
export function httpCases(s: Suite, addr: () => string | undefined, cases: ExpectedResponse[]): void {
  cases.forEach((tc, i) => {
    it.concurrent(testCaseName(tc, i), async () => {
      const a = addr();
      if (!a) throw new Error('no gateway address: the status case of this test failed');
      await makeRequestAndExpectEventuallyConsistentResponse(s.timeoutConfig, a, tc);
    });
  });
}

/**
 * The RPC cases of upstream's GRPCRoute tests (`t.Run(tc.GetTestCaseName(i), ...)` with
 * grpc.MakeRequestAndExpectEventuallyConsistentResponse), side by side as upstream's parallel subtests.
 */
export function grpcCases(s: Suite, addr: () => string | undefined, cases: GrpcExpectedResponse[]): void {
  cases.forEach((tc, i) => {
    it.concurrent(grpcTestCaseName(tc, i), async () => {
      const a = addr();
      if (!a) throw new Error('no gateway address: the status case of this test failed');
      await makeGrpcRequestAndExpectEventuallyConsistentResponse(s.timeoutConfig, a, tc);
    });
  });
}

/**
 * The request cases of upstream's mirror tests: each with a request id query parameter of its own, the mirror
 * backends' logs watched before the request is sent, the response checked, then every mirror's log line awaited.
 */
export function mirrorCases(
  s: Suite,
  addr: () => string | undefined,
  cases: (ExpectedResponse & { mirroredTo: MirroredBackend[] })[],
): void {
  cases.forEach((c, i) => {
    it.concurrent(testCaseName(c, i), async () => {
      const a = addr();
      if (!a) throw new Error('no gateway address: the status case of this test failed');
      const tc = withRequestId(c, randomUUID());
      const waitForMirrors = await expectMirroredRequest(s.kube, s.timeoutConfig, c.mirroredTo, tc.request.path ?? '');
      try {
        await makeRequestAndExpectEventuallyConsistentResponse(s.timeoutConfig, a, tc);
      } catch (err) {
        await waitForMirrors().catch(() => {}); // the response's failure is the one to report
        throw err;
      }
      await waitForMirrors();
    });
  });
}

/**
 * The first step most upstream tests take: GatewayAndHTTPRoutesMustBeAccepted, then (unless `resolvedRefs` is false)
 * HTTPRouteMustHaveResolvedRefsConditionsTrue for each route, as a case of its own; returns the gateway address it
 * found, for the request cases after it.
 */
export function routesAccepted(
  s: Suite,
  gw: GatewayRef,
  routes: NN[],
  opts: { resolvedRefs?: boolean; kind?: 'HTTPRoute' | 'GRPCRoute' | 'TCPRoute' | 'UDPRoute' } = {},
): () => string | undefined {
  let addr: string | undefined;
  const kind = opts.kind ?? 'HTTPRoute';
  it(`Gateway and ${kind}s must be accepted`, async () => {
    addr = await gatewayAndRoutesMustBeAccepted(s.kube, s.timeoutConfig, s.controllerName, gw, routes, kind);
    if (opts.resolvedRefs === false || kind !== 'HTTPRoute') return;
    for (const r of routes) await httpRouteMustHaveResolvedRefsConditionsTrue(s.kube, s.timeoutConfig, r, gw);
  });
  return () => addr;
}

/** One case of upstream's redirect tests: a request not following redirects, the status and the redirect expected. */
export function redirectCase(
  path: string,
  statusCode: number,
  redirect: { scheme?: string; host?: string; port?: string; path?: string },
  namespace: string,
  method?: string,
): ExpectedResponse {
  return {
    request: { path, unfollowRedirect: true, ...(method ? { method } : {}) },
    response: { statusCode },
    redirectRequest: redirect,
    namespace,
  };
}
