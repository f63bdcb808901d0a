// The ConformanceReport against upstream's shape (Gateway API v1.6.1 conformance/apis/v1 and utils/suite/reports.go;
// the field layout of a published report, conformance/reports/v1.5/kgateway/v2.3.0-beta.3-report.yaml): core and
// extended per profile, a test extended when one of its features is not core, Failure before Partial before
// Success, upstream's summary line, and a test skipped for an unsupported feature counted as Skipped (issue 18).
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { PROFILES } from './features.ts';
import { buildReport, reportYaml, type TestResult, unportedTests } from './report.ts';

const http = PROFILES['GATEWAY-HTTP'];

describe('ConformanceReport', () => {
  const results: TestResult[] = [
    { shortName: 'HTTPRouteSimpleSameNamespace', features: ['Gateway', 'HTTPRoute'], result: 'passed' },
    { shortName: 'GatewaySecretReferenceGrantSpecific', features: ['Gateway', 'ReferenceGrant'], result: 'failed' },
    {
      shortName: 'HTTPRouteMethodMatching',
      features: ['Gateway', 'HTTPRoute', 'HTTPRouteMethodMatching'],
      result: 'passed',
    },
    { shortName: 'HTTPRouteCORS', features: ['Gateway', 'HTTPRoute', 'HTTPRouteCORS'], result: 'skipped' },
    // Not in GATEWAY-HTTP (TLSRoute is not among its features): in no profile of this report.
    { shortName: 'TLSRouteSimpleSameNamespace', features: ['Gateway', 'TLSRoute'], result: 'passed' },
  ];
  const supported = new Set(['Gateway', 'HTTPRoute', 'ReferenceGrant', 'HTTPRouteMethodMatching']);
  const report = buildReport(results, {
    profiles: [http],
    supported,
    version: '0.1.0',
    date: new Date('2026-11-25T00:00:00Z'),
  });

  it('has the fields of an upstream report', () => {
    const doc = parse(reportYaml(report));
    expect(Object.keys(doc).sort()).toEqual(
      [
        'apiVersion',
        'date',
        'gatewayAPIChannel',
        'gatewayAPIVersion',
        'implementation',
        'kind',
        'mode',
        'profiles',
      ].sort(),
    );
    expect(doc).toMatchObject({
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'ConformanceReport',
      gatewayAPIVersion: 'v1.6.1',
      gatewayAPIChannel: 'standard',
      mode: 'default',
    });
    expect(Object.keys(doc.implementation).sort()).toEqual(['contact', 'organization', 'project', 'url', 'version']);
  });

  it('counts core and extended tests per profile, failures and skips by name', () => {
    const [p] = report.profiles as any[];
    expect(p.name).toBe('GATEWAY-HTTP');
    expect(p.core).toEqual({
      result: 'failure',
      statistics: { Failed: 1, Passed: 1, Skipped: 0 },
      failedTests: ['GatewaySecretReferenceGrantSpecific'],
    });
    expect(p.extended).toMatchObject({
      result: 'partial',
      statistics: { Failed: 0, Passed: 1, Skipped: 1 },
      skippedTests: ['HTTPRouteCORS'],
    });
    expect(p.extended.supportedFeatures).toEqual(['HTTPRouteMethodMatching']);
    expect(p.extended.unsupportedFeatures).toContain('HTTPRouteCORS');
    expect(p.summary).toBe(
      'Core tests failed with 1 test failures. Extended tests partially succeeded with 1 test skips.',
    );
  });

  it('reads success when every test passed', () => {
    const ok = buildReport([results[0]], { profiles: [http], supported, version: '0.1.0' });
    expect((ok.profiles as any[])[0]).toMatchObject({ core: { result: 'success' }, summary: 'Core tests succeeded.' });
  });

  it("counts upstream's tests that are not ported as skipped and says how many in the summary", () => {
    const ported = new Set(results.map((r) => r.shortName));
    const unported = unportedTests(ported);
    // v1.6.1 has 131 conformance tests (conformance/tests/*.go); the ones above are not among the unported.
    expect(unported.length).toBe(131 - [...ported].filter((n) => n !== 'HTTPRouteCORS').length - 1);
    expect(unported.every((t) => t.result === 'skipped' && !ported.has(t.shortName))).toBe(true);
    expect(unported.find((t) => t.shortName === 'HTTPRouteRequestMirror')?.features).toContain(
      'HTTPRouteRequestMirror',
    );
    const r = buildReport(results, { profiles: [http], supported, version: '0.1.0', unported });
    const [p] = r.profiles as any[];
    expect(p.core.result).toBe('failure');
    expect(p.core.skippedTests).toContain('HTTPRouteHTTPSListener');
    expect(p.extended.skippedTests).toContain('HTTPRouteRequestMirror');
    const skipped = p.core.statistics.Skipped + p.extended.statistics.Skipped;
    expect(p.summary).toMatch(new RegExp(`Not ported yet \\(counted as skipped\\): ${skipped - 1}\\.$`));
  });
});
