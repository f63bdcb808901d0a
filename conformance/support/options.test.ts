// npm run conformance's options (support/options.ts): profiles and the single test are checked against what is ported
// (an unknown ShortName fails as upstream's --run-test does), and the cluster is passed on.
import { describe, expect, it } from 'vitest';
import { conformanceEnv, portedShortNames } from './options.ts';

describe('conformance options', () => {
  it('finds every ported test, core ones included', () => {
    const names = portedShortNames();
    expect(names).toContain('HTTPRouteSimpleSameNamespace');
    expect(names).toContain('GatewayWithAttachedRoutesWithPort8080');
    expect(new Set(names).size).toBe(names.length);
  });

  it('maps the options to the environment of the conformance project', () => {
    expect(
      conformanceEnv({ profiles: ['GATEWAY-HTTP'], run: 'HTTPRouteMatching', kubeconfig: '/k', context: 'c' }, [
        'HTTPRouteMatching',
      ]),
    ).toEqual({
      GWLAB_CONFORMANCE_PROFILES: 'GATEWAY-HTTP',
      GWLAB_CONFORMANCE_RUN: 'HTTPRouteMatching',
      GWLAB_CONFORMANCE_KUBECONFIG: '/k',
      GWLAB_CONFORMANCE_CONTEXT: 'c',
    });
    expect(conformanceEnv({}, [])).toEqual({});
  });

  it('refuses a profile not ported and a test that does not exist, naming close ones', () => {
    expect(() => conformanceEnv({ profiles: ['GATEWAY-GRPC'] }, [])).toThrow(
      /GATEWAY-GRPC: not ported yet \(ported: GATEWAY-HTTP, GATEWAY-TCP, GATEWAY-TLS, GATEWAY-UDP\)/,
    );
    expect(() => conformanceEnv({ run: 'httproutematch' }, ['HTTPRouteMatching'])).toThrow(
      /no such test \(did you mean HTTPRouteMatching\?\)/,
    );
  });
});
