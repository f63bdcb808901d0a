// The vendored Gateway API bundles (gateway-api/, upstream's release assets unchanged) and what the lab needs to know
// about them: the version vendored (gateway-api/UPSTREAM), where each channel's bundle is (YAML as users download it;
// JSON, the same documents parsed, which loads ~25x faster than parsing the 1.2 MB of YAML), the command that upgrades
// a cluster to it, and the oldest bundle the control plane can run on. That minimum is derived, not chosen: for every
// kind of gateway.networking.k8s.io the control plane reads (system/controlplane/kube/watched.ts), the first standard
// channel release serving it at the version it reads (SERVED_SINCE, transcribed from upstream's
// config/crd/standard/*.yaml at each tag v1.0.0 … v1.6.1), the latest of those.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { WATCHED } from '../controlplane/kube/watched.ts';
import { GATEWAY_GROUP } from '../controlplane/model.ts';
import type { GatewayApiChannel } from './gateway-api-channels.ts';

/** system/manifests/, which readManifest's paths are relative to. */
export const MANIFESTS_DIR = dirname(fileURLToPath(import.meta.url));
export const GATEWAY_API_DIR = join(MANIFESTS_DIR, 'gateway-api');
export { GATEWAY_API_CHANNELS, type GatewayApiChannel } from './gateway-api-channels.ts';

/** The annotations every upstream Gateway API CRD carries (and the safe-upgrades admission policy reads). */
export const BUNDLE_VERSION_ANNOTATION = 'gateway.networking.k8s.io/bundle-version';
export const CHANNEL_ANNOTATION = 'gateway.networking.k8s.io/channel';

/** A release tag: v1.6.1, v1.6.0-rc.1. */
const RELEASE = /^v(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?$/;

/** gateway-api/UPSTREAM's `key: value` lines (written by scripts/vendor-gateway-api.ts). */
export function readUpstreamRecord(dir = GATEWAY_API_DIR): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of readFileSync(join(dir, 'UPSTREAM'), 'utf8').split('\n')) {
    const i = line.indexOf(': ');
    if (i > 0) out[line.slice(0, i)] = line.slice(i + 2);
  }
  return out;
}

/** The vendored release, e.g. v1.6.1. */
export const VENDORED_BUNDLE_VERSION = readUpstreamRecord().tag;

/** A bundle's file under system/manifests (for readManifest): the YAML as released, or its parsed JSON form. */
export function bundleFile(channel: GatewayApiChannel, form: 'yaml' | 'json'): string {
  return `gateway-api/${channel}-install.${form}`;
}

/** What a user runs to upgrade a cluster to the vendored release (as kgateway's and Envoy Gateway's docs say). */
export function upgradeCommands(channel: GatewayApiChannel): { release: string; vendored: string } {
  return {
    release: `kubectl apply --server-side -f https://github.com/kubernetes-sigs/gateway-api/releases/download/${VENDORED_BUNDLE_VERSION}/${channel}-install.yaml`,
    vendored: `kubectl apply --server-side -f system/manifests/${bundleFile(channel, 'yaml')}`,
  };
}

/**
 * `Kind/version` of gateway.networking.k8s.io → the first release whose standard channel serves it (read from
 * upstream's config/crd/standard/ at each tag). BackendLBPolicy, XListenerSet and the x-k8s.io kinds never reached the
 * standard channel and are not listed.
 */
export const SERVED_SINCE: Readonly<Record<string, string>> = {
  'GatewayClass/v1': 'v1.0.0',
  'GatewayClass/v1beta1': 'v1.0.0',
  'Gateway/v1': 'v1.0.0',
  'Gateway/v1beta1': 'v1.0.0',
  'HTTPRoute/v1': 'v1.0.0',
  'HTTPRoute/v1beta1': 'v1.0.0',
  'ReferenceGrant/v1beta1': 'v1.0.0',
  'ReferenceGrant/v1': 'v1.5.0',
  'GRPCRoute/v1': 'v1.1.0',
  'BackendTLSPolicy/v1': 'v1.4.0',
  'ListenerSet/v1': 'v1.5.0',
  'TLSRoute/v1': 'v1.5.0',
  'TCPRoute/v1': 'v1.6.0',
  'UDPRoute/v1': 'v1.6.0',
};

/** A Gateway API kind at the version the control plane reads it. */
export interface NeededKind {
  kind: string;
  version: string;
}

/**
 * The kinds of gateway.networking.k8s.io the control plane needs, at the versions it reads them: those it reads, but
 * its optional ones (TCPRoute, UDPRoute, ListenerSet: on a cluster without them it runs and serves none).
 */
export const NEEDED_KINDS: readonly NeededKind[] = WATCHED.filter(
  (w) => w.apiVersion.startsWith(`${GATEWAY_GROUP}/`) && !('optional' in w && w.optional),
).map((w) => ({ kind: w.kind, version: w.apiVersion.slice(GATEWAY_GROUP.length + 1) }));

/** The oldest bundle that serves every needed kind at its version; throws for a kind SERVED_SINCE does not know. */
export function minimumBundleVersion(needed: readonly NeededKind[]): string {
  let min = 'v1.0.0';
  for (const n of needed) {
    const since = SERVED_SINCE[`${n.kind}/${n.version}`];
    if (!since) throw new Error(`SERVED_SINCE has no entry for ${n.kind} ${n.version}: add the release that serves it`);
    if (compareBundleVersions(since, min) > 0) min = since;
  }
  return min;
}

/** The oldest Gateway API release the control plane runs on. */
export const MINIMUM_BUNDLE_VERSION = minimumBundleVersion(NEEDED_KINDS);

/** Whether `v` is a release tag of the form upstream uses (v1.6.1, v1.5.0-rc.1). */
export function isBundleVersion(v: string | undefined): v is string {
  return !!v && RELEASE.test(v);
}

/**
 * Orders two release tags as semver does (https://semver.org/#spec-item-11): major, minor, patch numerically, a
 * pre-release (v1.6.0-rc.1) before its release, pre-release identifiers numerically when both are numbers. Written
 * here rather than taken from the `semver` package: upstream's tags only ever take this form, and these dozen lines
 * spare the project a dependency.
 */
export function compareBundleVersions(a: string, b: string): number {
  const ma = RELEASE.exec(a);
  const mb = RELEASE.exec(b);
  if (!ma || !mb) throw new Error(`not a release tag: ${ma ? b : a}`);
  for (let i = 1; i <= 3; i++) {
    const d = Number(ma[i]) - Number(mb[i]);
    if (d) return Math.sign(d);
  }
  if (ma[4] === mb[4]) return 0;
  if (!ma[4]) return 1;
  if (!mb[4]) return -1;
  const pa = ma[4].split('.');
  const pb = mb[4].split('.');
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    if (pa[i] === undefined) return -1;
    if (pb[i] === undefined) return 1;
    const na = /^\d+$/.test(pa[i]);
    const nb = /^\d+$/.test(pb[i]);
    if (na && nb && Number(pa[i]) !== Number(pb[i])) return Math.sign(Number(pa[i]) - Number(pb[i]));
    if (na !== nb) return na ? -1 : 1;
    if (pa[i] !== pb[i]) return pa[i] < pb[i] ? -1 : 1;
  }
  return 0;
}
