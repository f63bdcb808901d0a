// The Gateway API v1.6.1 install bundles, exactly as users apply them (real kubectl, server-side apply), against the
// embedded API server: both bundles install with exit 0 (their ValidatingAdmissionPolicy and binding included), and
// the bundle's own safe-upgrade policy (system/manifests/gateway-api/*-install.yaml, "safe-upgrades.gateway.
// networking.k8s.io") refuses what upstream wrote it to refuse, with upstream's messages, as kube-apiserver does:
// experimental CRDs over standard ones, and CRDs of a bundle version before v1.5.0. A Warn binding makes the same
// failure a kubectl warning. Messages: k8s.io/apiserver pkg/admission/plugin/policy/validating/dispatcher.go.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { startTestLab, type TestLab } from '../testing/test-lab.ts';

const BUNDLES = join(import.meta.dirname, '../../../../system/manifests/gateway-api');
const STANDARD = join(BUNDLES, 'standard-install.yaml');
const EXPERIMENTAL = join(BUNDLES, 'experimental-install.yaml');
const POLICY = 'safe-upgrades.gateway.networking.k8s.io';
const EXPERIMENTAL_OVER_STANDARD =
  'Installing experimental CRDs on top of standard channel CRDs is prohibited by default. Uninstall ValidatingAdmissionPolicy safe-upgrades.gateway.networking.k8s.io to install experimental CRDs on top of standard channel CRDs.';
const BEFORE_V15 =
  'Installing CRDs with version before v1.5.0 is prohibited by default. Uninstall ValidatingAdmissionPolicy safe-upgrades.gateway.networking.k8s.io to install older versions.';

let labs: TestLab[] = [];
afterEach(async () => {
  await Promise.all(labs.map((l) => l.stop()));
  labs = [];
});

async function freshLab(): Promise<TestLab> {
  const lab = await startTestLab();
  labs.push(lab);
  return lab;
}

const apply = (lab: TestLab, file: string) =>
  lab.kubectl(['apply', '--server-side', '-f', file], { timeoutMs: 120_000 });

/** The CRD `name` of the standard bundle, with its bundle-version annotation set to `version`. */
function olderCrd(name: string, version: string): string {
  const doc = parseAllDocuments(readFileSync(STANDARD, 'utf8'))
    .map((d) => d.toJS())
    .find((o) => o?.kind === 'CustomResourceDefinition' && o.metadata.name === name);
  doc.metadata.annotations['gateway.networking.k8s.io/bundle-version'] = version;
  return JSON.stringify(doc);
}

describe('Gateway API v1.6.1 bundles (kubectl apply --server-side)', { timeout: 240_000 }, () => {
  it('standard-install.yaml installs with exit 0: every CRD Established, the safe-upgrade policy and binding served', async () => {
    const lab = await freshLab();
    const r = await apply(lab, STANDARD);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`validatingadmissionpolicy.admissionregistration.k8s.io/${POLICY} serverside-applied`);
    expect(r.stdout).toContain(
      `validatingadmissionpolicybinding.admissionregistration.k8s.io/${POLICY} serverside-applied`,
    );
    await lab.k(['wait', '--for=condition=Established', 'crd', '--all', '--timeout=10s']);
    const crds = await lab.k(['get', 'crd', '-o', 'name']);
    expect(crds.trim().split('\n')).toHaveLength(10);
    const table = await lab.k(['get', 'validatingadmissionpolicies']);
    expect(table).toMatch(/^NAME\s+VALIDATIONS\s+PARAMKIND\s+AGE\n/);
    expect(table).toMatch(new RegExp(`${POLICY.replace(/\./g, '\\.')}\\s+2\\s+<unset>\\s+`));
    const bindings = await lab.k(['get', 'validatingadmissionpolicybindings']);
    expect(bindings).toMatch(/^NAME\s+POLICYNAME\s+PARAMREF\s+AGE\n/);
    // Applying the same bundle again changes nothing and is still admitted.
    expect((await apply(lab, STANDARD)).code).toBe(0);
  });

  it('experimental-install.yaml installs with exit 0 (all 13 CRDs Established, xbackends, xbackendtrafficpolicies, xmeshes among them), again over itself, and standard over it', async () => {
    const lab = await freshLab();
    const r = await apply(lab, EXPERIMENTAL);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    for (const crd of ['xbackends', 'xbackendtrafficpolicies', 'xmeshes'])
      await lab.k(['wait', '--for=condition=Established', `crd/${crd}.gateway.networking.x-k8s.io`, '--timeout=10s']);
    await lab.k(['wait', '--for=condition=Established', 'crd', '--all', '--timeout=10s']);
    expect((await lab.k(['get', 'crd', '-o', 'name'])).trim().split('\n')).toHaveLength(13);
    // Experimental over experimental (an upgrade within the channel) is admitted.
    const again = await apply(lab, EXPERIMENTAL);
    expect(again.stderr).toBe('');
    expect(again.code).toBe(0);
    const back = await apply(lab, STANDARD);
    expect(back.stderr).toBe('');
    expect(back.code).toBe(0);
  });

  it('the safe-upgrade policy refuses experimental CRDs over standard ones, with upstream message', async () => {
    const lab = await freshLab();
    expect((await apply(lab, STANDARD)).code).toBe(0);
    const r = await apply(lab, EXPERIMENTAL);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(
      `customresourcedefinitions.apiextensions.k8s.io "gateways.gateway.networking.k8s.io" is forbidden: ValidatingAdmissionPolicy '${POLICY}' with binding '${POLICY}' denied request: ${EXPERIMENTAL_OVER_STANDARD}`,
    );
    // Nothing stored on a refusal: the CRD is still the standard channel's.
    const ann = await lab.k([
      'get',
      'crd',
      'gateways.gateway.networking.k8s.io',
      '-o',
      'jsonpath={.metadata.annotations.gateway\\.networking\\.k8s\\.io/channel}',
    ]);
    expect(ann).toBe('standard');
  });

  it('the safe-upgrade policy refuses a CRD of bundle version v1.4.x (create and update), with upstream message', async () => {
    const lab = await freshLab();
    expect((await apply(lab, STANDARD)).code).toBe(0);
    const old = olderCrd('httproutes.gateway.networking.k8s.io', 'v1.4.1');
    const upd = await lab.kubectl(['apply', '--server-side', '-f', '-'], { input: old });
    expect(upd.code).not.toBe(0);
    expect(upd.stderr).toContain(`with binding '${POLICY}' denied request: ${BEFORE_V15}`);
    await lab.k(['delete', 'crd', 'httproutes.gateway.networking.k8s.io']);
    const create = await lab.kubectl(['create', '-f', '-'], { input: old });
    expect(create.code).not.toBe(0);
    expect(create.stderr).toContain(BEFORE_V15);
    expect((await lab.kubectl(['get', 'crd', 'httproutes.gateway.networking.k8s.io'])).code).not.toBe(0);
  });

  it('a Warn binding turns the same refusal into a kubectl warning and the write goes through', async () => {
    const lab = await freshLab();
    expect((await apply(lab, STANDARD)).code).toBe(0);
    await lab.k([
      'patch',
      'validatingadmissionpolicybinding',
      POLICY,
      '--type=merge',
      '-p',
      '{"spec":{"validationActions":["Warn"]}}',
    ]);
    const r = await lab.kubectl(['apply', '--server-side', '-f', '-'], {
      input: olderCrd('grpcroutes.gateway.networking.k8s.io', 'v1.4.0'),
    });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(
      `Warning: Validation failed for ValidatingAdmissionPolicy '${POLICY}' with binding '${POLICY}': ${BEFORE_V15}`,
    );
  });
});
