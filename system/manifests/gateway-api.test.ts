// The vendored Gateway API bundles are upstream's, intact: each file has the sha256 recorded when it was vendored
// (scripts/vendor-gateway-api.ts writes gateway-api/UPSTREAM), its JSON form holds the same documents, and every CRD
// carries the release's bundle-version and its channel, as upstream's config/crd/*/ files do. And what the lab derives
// from them (gateway-api.ts): the oldest release the control plane runs on, from the kinds it reads
// (controlplane/kube/watched.ts) and the release that first served each (upstream's config/crd/standard/ at each tag).
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import {
  BUNDLE_VERSION_ANNOTATION,
  bundleFile,
  CHANNEL_ANNOTATION,
  compareBundleVersions,
  GATEWAY_API_CHANNELS,
  GATEWAY_API_DIR,
  MINIMUM_BUNDLE_VERSION,
  minimumBundleVersion,
  NEEDED_KINDS,
  readUpstreamRecord,
  SERVED_SINCE,
  VENDORED_BUNDLE_VERSION,
} from './gateway-api.ts';

const MANIFESTS = join(GATEWAY_API_DIR, '..');
const read = (rel: string) => readFileSync(join(MANIFESTS, rel), 'utf8');
const bundle = (channel: string): any[] => JSON.parse(read(bundleFile(channel as 'standard', 'json')));

describe('vendored Gateway API bundles', () => {
  const upstream = readUpstreamRecord();

  it('are the release recorded in UPSTREAM: v1.6.1 at its commit', () => {
    expect(upstream.tag).toBe('v1.6.1');
    expect(upstream.commit).toBe('8bb74df00e56ec8f944d48c25e6c1c9c2f6848e3');
    expect(VENDORED_BUNDLE_VERSION).toBe(upstream.tag);
  });

  for (const channel of GATEWAY_API_CHANNELS) {
    describe(channel, () => {
      it('has the sha256 recorded in UPSTREAM (the file is unchanged since it was vendored)', () => {
        const sum = createHash('sha256')
          .update(read(bundleFile(channel, 'yaml')))
          .digest('hex');
        expect(upstream[`sha256 ${channel}-install.yaml`]).toMatch(/^[0-9a-f]{64}$/);
        expect(sum).toBe(upstream[`sha256 ${channel}-install.yaml`]);
      });

      it('has a JSON form that holds exactly the YAML documents', () => {
        const docs = parseAllDocuments(read(bundleFile(channel, 'yaml')))
          .map((d) => d.toJS())
          .filter((d) => d && typeof d === 'object');
        expect(bundle(channel)).toEqual(docs);
      });

      it(`marks every CRD with bundle-version ${'v1.6.1'} and the ${channel} channel`, () => {
        const crds = bundle(channel).filter((d) => d.kind === 'CustomResourceDefinition');
        expect(crds.length).toBe(channel === 'standard' ? 10 : 13);
        for (const c of crds) {
          expect(c.metadata.annotations[BUNDLE_VERSION_ANNOTATION], c.metadata.name).toBe('v1.6.1');
          expect(c.metadata.annotations[CHANNEL_ANNOTATION], c.metadata.name).toBe(channel);
        }
        // And the safe-upgrades admission policy with its binding, as upstream ships them.
        expect(
          bundle(channel)
            .filter((d) => d.kind !== 'CustomResourceDefinition')
            .map((d) => `${d.apiVersion} ${d.kind}`),
        ).toEqual([
          'admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy',
          'admissionregistration.k8s.io/v1 ValidatingAdmissionPolicyBinding',
        ]);
      });
    });
  }
});

describe('the Gateway API the control plane needs', () => {
  it('is v1.5.0: it reads ReferenceGrant at v1, first served by v1.5.0', () => {
    expect(NEEDED_KINDS).toEqual(
      expect.arrayContaining([
        { kind: 'GatewayClass', version: 'v1' },
        { kind: 'Gateway', version: 'v1' },
        { kind: 'HTTPRoute', version: 'v1' },
        { kind: 'ReferenceGrant', version: 'v1' },
      ]),
    );
    // TCPRoute, UDPRoute, ListenerSet (v1 since v1.6.0 / v1.5.0) are read when served, not needed.
    expect(NEEDED_KINDS.map((n) => n.kind)).not.toContain('TCPRoute');
    expect(NEEDED_KINDS.map((n) => n.kind)).not.toContain('UDPRoute');
    expect(NEEDED_KINDS.map((n) => n.kind)).not.toContain('ListenerSet');
    expect(MINIMUM_BUNDLE_VERSION).toBe(minimumBundleVersion(NEEDED_KINDS));
    expect(MINIMUM_BUNDLE_VERSION).toBe('v1.5.0');
    expect(minimumBundleVersion([{ kind: 'ReferenceGrant', version: 'v1beta1' }])).toBe('v1.0.0');
    expect(minimumBundleVersion([{ kind: 'TCPRoute', version: 'v1' }])).toBe('v1.6.0');
    expect(() => minimumBundleVersion([{ kind: 'Mesh', version: 'v1' }])).toThrow(/SERVED_SINCE has no entry/);
  });

  it('every kind it reads is served by the vendored standard bundle at the version it reads', () => {
    const crds = bundle('standard').filter((d) => d.kind === 'CustomResourceDefinition');
    for (const n of NEEDED_KINDS) {
      const crd = crds.find((c) => c.spec.names.kind === n.kind);
      expect(
        crd?.spec.versions.some((v: any) => v.name === n.version && v.served),
        `${n.kind} ${n.version}`,
      ).toBe(true);
    }
  });

  it('SERVED_SINCE names versions the vendored standard bundle serves, no later than the vendored release', () => {
    const crds = bundle('standard').filter((d) => d.kind === 'CustomResourceDefinition');
    for (const [kindVersion, since] of Object.entries(SERVED_SINCE)) {
      const [kind, version] = kindVersion.split('/');
      const crd = crds.find((c) => c.spec.names.kind === kind);
      expect(
        crd?.spec.versions.some((v: any) => v.name === version && v.served),
        kindVersion,
      ).toBe(true);
      expect(compareBundleVersions(since, VENDORED_BUNDLE_VERSION), kindVersion).toBeLessThanOrEqual(0);
    }
  });

  it('orders release tags as semver does', () => {
    const sorted = ['v1.10.0', 'v1.6.1', 'v1.6.0', 'v1.6.0-rc.10', 'v1.6.0-rc.2', 'v1.5.1', 'v0.8.0'].sort(
      compareBundleVersions,
    );
    expect(sorted).toEqual(['v0.8.0', 'v1.5.1', 'v1.6.0-rc.2', 'v1.6.0-rc.10', 'v1.6.0', 'v1.6.1', 'v1.10.0']);
    expect(compareBundleVersions('v1.6.1', 'v1.6.1')).toBe(0);
    expect(() => compareBundleVersions('1.6.1', 'v1.6.1')).toThrow(/not a release tag: 1.6.1/);
  });
});
