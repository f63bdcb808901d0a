// GatewayExtension on its own (extensions.ts): the gRPC-service kinds (rateLimit, extProc) read by one reader — the
// backendRef required first, then the kind's own settings, then the Service port as an HTTP/2 cluster (Envoy's gRPC
// client needs one) — each with the problem that makes it Accepted=False, and ResolvedRefs=False for a Service that
// is not there.
import { describe, expect, it } from 'vitest';
import type { GatewayExtension, Service } from '../model.ts';
import type { RouteWorld } from './backend-refs.ts';
import { buildExtensionInfo } from './extensions.ts';

const svc: Service = {
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name: 'svc', namespace: 'app' },
  spec: { ports: [{ name: 'grpc', port: 8081 }] },
};
const world: RouteWorld = {
  service: (ns, name) => (ns === 'app' && name === 'svc' ? svc : undefined),
  referenceGrants: () => [],
};
const ext = (spec: GatewayExtension['spec']): GatewayExtension => ({
  apiVersion: 'gateway.gwvendor.dev/v1alpha1',
  kind: 'GatewayExtension',
  metadata: { name: 'x', namespace: 'app', generation: 3 },
  spec,
});
const ref = { kind: 'GatewayExtension', namespace: 'app', name: 'x' };
const cluster = { name: 'kube_app_svc_8081', namespace: 'app', service: 'svc', port: 8081, protocol: 'http2' };
const backendRef = { name: 'svc', port: 8081 };
const invalidBecause = (message: string) => ({
  ref,
  generation: 3,
  accepted: { ok: false, reason: 'Invalid', message },
  resolvedRefs: { ok: false, reason: 'Invalid', message: 'not resolved: the extension is invalid' },
});

describe('rateLimit', () => {
  it('resolves to an HTTP/2 cluster with its authority, domain, timeout and failOpen (default true)', () => {
    const out = buildExtensionInfo(
      ext({ rateLimit: { grpcService: { backendRef, authority: 'rls' }, domain: 'd', timeout: '250ms' } }),
      world,
    );
    expect(out.accepted).toMatchObject({ ok: true, reason: 'Accepted' });
    expect(out.resolvedRefs).toEqual({
      ok: true,
      reason: 'ResolvedRefs',
      message: 'backend Service app/svc:8081 (gRPC)',
    });
    expect(out.rateLimit).toMatchObject({
      filterName: 'envoy.filters.http.ratelimit/app/x',
      extension: ref,
      cluster,
      authority: 'rls',
      domain: 'd',
      timeout: '0.250s',
      failOpen: true,
    });
  });

  it('names what is missing or wrong, backendRef first', () => {
    const missingRef = { grpcService: {} as never, domain: '', timeout: 'soon' };
    expect(buildExtensionInfo(ext({ rateLimit: missingRef }), world)).toEqual(
      invalidBecause('spec.rateLimit.grpcService.backendRef is required'),
    );
    expect(
      buildExtensionInfo(ext({ rateLimit: { grpcService: { backendRef }, domain: '', timeout: 'soon' } }), world),
    ).toEqual(invalidBecause('spec.rateLimit.domain is required'));
    expect(
      buildExtensionInfo(ext({ rateLimit: { grpcService: { backendRef }, domain: 'd', timeout: 'soon' } }), world),
    ).toEqual(invalidBecause('spec.rateLimit.timeout: invalid duration "soon"'));
  });
});

describe('extProc', () => {
  it('resolves to an HTTP/2 cluster; request headers sent and failOpen false by default, its message timeout', () => {
    const out = buildExtensionInfo(ext({ extProc: { grpcService: { backendRef }, messageTimeout: '1s' } }), world);
    expect(out.extProc).toEqual({
      filterName: 'envoy.filters.http.ext_proc/app/x',
      extension: ref,
      cluster,
      requestHeaders: true,
      messageTimeout: '1s',
      failOpen: false,
    });
    const skip = buildExtensionInfo(
      ext({
        extProc: {
          grpcService: { backendRef },
          messageTimeout: '1s',
          processingMode: { requestHeaders: 'Skip' },
          failOpen: true,
        },
      }),
      world,
    );
    expect(skip.extProc).toMatchObject({ requestHeaders: false, failOpen: true });
  });

  it('names what is missing or wrong; a Service that is not there is ResolvedRefs=False, the extension still valid', () => {
    expect(buildExtensionInfo(ext({ extProc: { grpcService: {} as never, messageTimeout: 'x' } }), world)).toEqual(
      invalidBecause('spec.extProc.grpcService.backendRef is required'),
    );
    expect(buildExtensionInfo(ext({ extProc: { grpcService: { backendRef }, messageTimeout: 'x' } }), world)).toEqual(
      invalidBecause('spec.extProc.messageTimeout: invalid duration "x"'),
    );
    const gone = buildExtensionInfo(
      ext({ extProc: { grpcService: { backendRef: { name: 'gone', port: 1 } }, messageTimeout: '1s' } }),
      world,
    );
    expect(gone.accepted.ok).toBe(true);
    expect(gone.resolvedRefs.ok).toBe(false);
    expect(gone.extProc).toBeUndefined();
  });
});

describe('the timeouts Envoy defaults when the extension sets none', () => {
  // The defaults were once written in proto form ('0.020s', '0.200s'), which the GEP-2257 reader refuses: an
  // extension without a timeout was Accepted=False "invalid duration undefined".
  it('rateLimit: 20ms (rate_limit.proto), extProc: 200ms (ext_proc.proto message_timeout)', () => {
    const rl = buildExtensionInfo(ext({ rateLimit: { grpcService: { backendRef }, domain: 'd' } }), world);
    expect(rl.accepted).toMatchObject({ ok: true, reason: 'Accepted' });
    expect(rl.rateLimit?.timeout).toBe('0.020s');
    const ep = buildExtensionInfo(ext({ extProc: { grpcService: { backendRef } } }), world);
    expect(ep.accepted).toMatchObject({ ok: true, reason: 'Accepted' });
    expect(ep.extProc?.messageTimeout).toBe('0.200s');
  });
});
