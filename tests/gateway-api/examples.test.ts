// Upstream's example corpora (Gateway API v1.6.1, tests/upstream/gateway-api/), checked as upstream checks them in
// tests/crd/crd_test.go (TestCRDValidation, at tag v1.6.1): with the channel's CRDs installed,
// `kubectl apply --recursive -f examples/<channel>` succeeds, and `kubectl apply -f` of every file under
// hack/invalid-examples (experimental ones only with the experimental CRDs) fails with output containing "is invalid",
// "missing required field", "denied request" or "Invalid value" (expectedValidationError). Beyond upstream, each
// invalid example must fail for its own reason: EXPECTED names the message of the schema rule it breaks (the CRD's
// CEL rule message or OpenAPI check), so a rejection for an unrelated reason does not pass.
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeApiAgents } from '../../lab/embedded/apiserver/testing/requests.ts';
import type { TestLab } from '../../lab/embedded/apiserver/testing/test-lab.ts';
import { type Channel, labWithGatewayApi, UPSTREAM } from './install.ts';
import { EXPECTED } from './invalid-examples.ts';

function files(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((f) => {
      const p = join(dir, f);
      return statSync(p).isDirectory() ? files(p) : f.endsWith('.yaml') ? [p] : [];
    });
}

const expectedValidationError = (out: string) =>
  ['is invalid', 'missing required field', 'denied request', 'Invalid value'].some((s) => out.includes(s));

const invalidRoot = join(UPSTREAM, 'hack', 'invalid-examples');

for (const channel of ['standard', 'experimental'] as Channel[]) {
  describe(`Gateway API v1.6.1 ${channel} CRDs`, () => {
    let lab: TestLab;
    beforeAll(async () => {
      lab = await labWithGatewayApi(channel);
    });
    afterAll(async () => {
      await closeApiAgents();
      await lab?.stop();
    });

    it(`should be able to install ${channel} examples`, async () => {
      const r = await lab.kubectl(['apply', '--recursive', '-f', join(UPSTREAM, 'examples', channel)], {
        timeoutMs: 120_000,
      });
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
    });

    it('GatewayClass controllerName is immutable (its CEL transition rule), as kubectl shows it', async () => {
      const gc = (controller: string) =>
        `apiVersion: gateway.networking.k8s.io/v1\nkind: GatewayClass\nmetadata: {name: immutable-${channel}}\nspec: {controllerName: ${controller}}\n`;
      expect((await lab.kubectl(['apply', '-f', '-'], { input: gc('example.com/a') })).code).toBe(0);
      const r = await lab.kubectl(['apply', '-f', '-'], { input: gc('example.com/b') });
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain(
        `The GatewayClass "immutable-${channel}" is invalid: spec.controllerName: Invalid value: "string": Value is immutable`,
      );
    });

    it('a Gateway address of type IPAddress must be an ipv4 or ipv6 address (format: ipv4 refuses 1.2.3)', async () => {
      const gw = `apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: ipv4-${channel}, namespace: default}\nspec:\n  gatewayClassName: x\n  addresses: [{type: IPAddress, value: 1.2.3}]\n  listeners: [{name: http, protocol: HTTP, port: 80}]\n`;
      const r = await lab.kubectl(['apply', '-f', '-'], { input: gw });
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain(
        'spec.addresses[0].value: Invalid value: "1.2.3": spec.addresses[0].value in body must be of type ipv4: "1.2.3"',
      );
    });

    const invalid = files(invalidRoot).filter((f) => channel === 'experimental' || !f.includes('experimental'));
    it.each(invalid.map((f) => relative(invalidRoot, f)))('validate example %s', async (rel) => {
      const r = await lab.kubectl(['apply', '-f', join(invalidRoot, rel)]);
      const out = r.stdout + r.stderr;
      expect(r.code, out).not.toBe(0);
      expect(expectedValidationError(out), out).toBe(true);
      expect(EXPECTED[rel], `no expectation for ${rel}: ${out}`).toBeDefined();
      expect(out).toContain(EXPECTED[rel]);
    });
  });
}
