// lab:up's decision on a cluster's Gateway API CRDs (gateway-api-crds.ts), case by case: none → install; current or
// newer → keep untouched; older, a needed kind missing, or not served at the version the control plane reads → stop
// with the upgrade command (the release URL kgateway's and Envoy Gateway's install docs give, and the vendored copy).
// The installed CRDs are the vendored v1.6.1 ones, and those of older releases as upstream's config/crd/standard/
// serves them (v1.3.0: ReferenceGrant at v1beta1 only; v1.5.0: ReferenceGrant v1 added).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  bundleFile,
  compareBundleVersions,
  type GatewayApiChannel,
  MANIFESTS_DIR,
  MINIMUM_BUNDLE_VERSION,
  NEEDED_KINDS,
  SERVED_SINCE,
  VENDORED_BUNDLE_VERSION,
} from '../system/manifests/gateway-api.ts';
import { type CrdDecision, decideGatewayApiCrds, type InstalledCrd } from './gateway-api-crds.ts';

const vendored = (channel: GatewayApiChannel): InstalledCrd[] =>
  (JSON.parse(readFileSync(join(MANIFESTS_DIR, bundleFile(channel, 'json')), 'utf8')) as any[]).filter(
    (d) => d.kind === 'CustomResourceDefinition',
  );

/** The vendored CRDs relabelled as another release, optionally with a kind's served versions changed or removed. */
function asRelease(version: string | undefined, edit: Record<string, string[] | null> = {}): InstalledCrd[] {
  return vendored('standard')
    .filter((c) => edit[c.spec!.names!.kind!] !== null)
    .map((c) => {
      const copy = structuredClone(c);
      const annotations = copy.metadata!.annotations!;
      if (version) annotations['gateway.networking.k8s.io/bundle-version'] = version;
      else delete annotations['gateway.networking.k8s.io/bundle-version'];
      const served = edit[copy.spec!.names!.kind!];
      if (served) copy.spec!.versions = served.map((name) => ({ name, served: true }));
      return copy;
    });
}

const decide = (installed: InstalledCrd[], channel: GatewayApiChannel = 'standard'): CrdDecision =>
  decideGatewayApiCrds({
    installed,
    channel,
    vendored: VENDORED_BUNDLE_VERSION,
    minimum: MINIMUM_BUNDLE_VERSION,
    needed: NEEDED_KINDS,
  });

const RELEASE_URL = 'https://github.com/kubernetes-sigs/gateway-api/releases/download/v1.6.1';

describe('decideGatewayApiCrds', () => {
  it('none installed (other groups ignored): installs the vendored bundle of the channel asked for', () => {
    const other: InstalledCrd = { spec: { group: 'gateway.gwvendor.dev', names: { kind: 'TrafficPolicy' } } };
    expect(decide([])).toEqual({
      action: 'install',
      channel: 'standard',
      message: 'none installed: installing the vendored v1.6.1 standard bundle',
    });
    expect(decide([other], 'experimental')).toMatchObject({ action: 'install', channel: 'experimental' });
  });

  it('the vendored v1.6.1 installed: keeps them, saying so', () => {
    expect(decide(vendored('standard'))).toEqual({
      action: 'keep',
      message: `the cluster has Gateway API v1.6.1 (standard channel), at least the ${MINIMUM_BUNDLE_VERSION} the control plane needs: keeping them as they are`,
      notes: [],
    });
  });

  it('the minimum release (v1.5.0 while the control plane reads ReferenceGrant at v1): keeps them', () => {
    // The kinds that release did not have yet are absent, as upstream's config/crd/standard/ at that tag has them.
    const later = Object.fromEntries(
      Object.entries(SERVED_SINCE)
        .filter(([kv, since]) => kv.endsWith('/v1') && compareBundleVersions(since, MINIMUM_BUNDLE_VERSION) > 0)
        .map(([kv]) => [kv.split('/')[0], null]),
    );
    const d = decide(asRelease(MINIMUM_BUNDLE_VERSION, later));
    expect(d).toMatchObject({
      action: 'keep',
      message: expect.stringContaining(`Gateway API ${MINIMUM_BUNDLE_VERSION} (standard`),
    });
  });

  it('experimental installed, standard asked for (or the other way round): keeps them and says the flag is not applied', () => {
    expect(decide(vendored('experimental'))).toMatchObject({
      action: 'keep',
      message: expect.stringContaining('v1.6.1 (experimental channel)'),
      notes: ['they are the experimental channel; --gateway-api-channel standard is not applied over them'],
    });
    expect(decide(vendored('standard'), 'experimental')).toMatchObject({
      action: 'keep',
      notes: ['they are the standard channel; --gateway-api-channel experimental is not applied over them'],
    });
  });

  it('newer than the vendored release: keeps them and says they are newer', () => {
    expect(decide(asRelease('v1.7.0'))).toMatchObject({
      action: 'keep',
      message:
        'the cluster has Gateway API v1.7.0 (standard channel), newer than the vendored v1.6.1: keeping them as they are',
    });
  });

  it('v1.3.0 (ReferenceGrant served at v1beta1 only): stops, naming why, with the upgrade commands', () => {
    const d = decide(asRelease('v1.3.0', { ReferenceGrant: ['v1beta1'], ListenerSet: null }));
    expect(d.action).toBe('stop');
    expect(d.message).toBe(
      `the cluster's Gateway API CRDs are v1.3.0 (standard channel): the control plane needs ${MINIMUM_BUNDLE_VERSION} or later; ` +
        'ReferenceGrant is not served at v1 (served: v1beta1), which the control plane reads. Nothing was changed ' +
        "(lab:up never downgrades or replaces a cluster's Gateway API CRDs)",
    );
    expect(d.action === 'stop' && d.hint).toBe(
      `upgrade them, then run lab:up again: kubectl apply --server-side -f ${RELEASE_URL}/standard-install.yaml\n` +
        "  (or this repository's copy of the same v1.6.1 bundle: kubectl apply --server-side -f system/manifests/gateway-api/standard-install.yaml)",
    );
  });

  it('an old experimental channel: the upgrade command is the experimental bundle', () => {
    const old = asRelease('v1.4.0').map((c) => {
      c.metadata!.annotations!['gateway.networking.k8s.io/channel'] = 'experimental';
      return c;
    });
    const d = decide(old);
    expect(d).toMatchObject({ action: 'stop', message: expect.stringContaining('v1.4.0 (experimental channel)') });
    expect(d.action === 'stop' && d.hint).toContain(`${RELEASE_URL}/experimental-install.yaml`);
  });

  it('a kind the control plane reads missing: stops, whatever the version says', () => {
    const d = decide(asRelease('v1.6.1', { HTTPRoute: null }));
    expect(d).toMatchObject({ action: 'stop', message: expect.stringContaining('HTTPRoute is not installed') });
  });

  it('no bundle-version annotation but every needed kind served: keeps them, noting the missing annotation', () => {
    expect(decide(asRelease(undefined))).toMatchObject({
      action: 'keep',
      message: expect.stringContaining('of no known bundle version (standard channel), serving every kind'),
      notes: ['10 of them carry no gateway.networking.k8s.io/bundle-version annotation'],
    });
  });

  it('newer but without a kind at the version the control plane reads: stops without an upgrade command', () => {
    const d = decide(asRelease('v2.0.0', { ReferenceGrant: ['v2'] }));
    expect(d).toMatchObject({
      action: 'stop',
      message: expect.stringContaining('v2.0.0 (standard channel), newer than the vendored v1.6.1, but ReferenceGrant'),
    });
    expect(d.action === 'stop' && d.hint).toBeUndefined();
  });

  it('CRDs of mixed releases: judged by the oldest', () => {
    const mixed = [...asRelease('v1.6.1').filter((c) => c.spec!.names!.kind !== 'Gateway')];
    mixed.push(...asRelease('v1.4.0').filter((c) => c.spec!.names!.kind === 'Gateway'));
    expect(decide(mixed)).toMatchObject({ action: 'stop', message: expect.stringContaining('are v1.4.0') });
  });

  it('the v1.3.0 subset an earlier gwlab installed (its annotation on each): installs the vendored bundle over it', () => {
    const subset = asRelease('v1.3.0', { ReferenceGrant: ['v1beta1'] })
      .filter((c) => ['GatewayClass', 'Gateway', 'HTTPRoute', 'ReferenceGrant'].includes(c.spec!.names!.kind!))
      .map((c) => {
        c.metadata!.annotations!['gateway.gwvendor.dev/subset'] = 'the Gateway API fields gwlab supports';
        return c;
      });
    expect(decide(subset)).toEqual({
      action: 'install',
      channel: 'standard',
      message:
        'the cluster has the Gateway API subset an earlier gwlab installed (v1.3.0): replacing it with the vendored v1.6.1 standard bundle',
    });
    // Beside CRDs of anyone else's, it is not ours alone: the usual rules (here: too old, stop), the upgrade forced
    // over the fields the earlier gwlab's field manager owns.
    const mixed = decide([...subset, ...asRelease('v1.3.0').filter((c) => c.spec!.names!.kind === 'GRPCRoute')]);
    expect(mixed).toMatchObject({ action: 'stop' });
    expect(mixed.action === 'stop' && mixed.hint).toContain(
      `kubectl apply --server-side --force-conflicts -f ${RELEASE_URL}/standard-install.yaml`,
    );
  });
});
