// Never downgrade a cluster's Gateway API: what lab:up does with the Gateway API CRDs a cluster already has, decided
// once, before anything is changed (install.ts calls it on every backend). The decision is pure (the CRDs of
// gateway.networking.k8s.io in, the action out): none installed → install the vendored bundle; installed and serving
// every kind the control plane reads at the version it reads, at a bundle version at least the minimum → keep them
// untouched (newer than the vendored release: keep too, and say so); older, or a needed kind missing or not served at
// its version → stop and print the command that upgrades them, the one upstream's install guide gives
// (https://gateway-api.sigs.k8s.io/guides/: `kubectl apply --server-side -f <release>/standard-install.yaml`), as
// kgateway's and Envoy Gateway's install docs send users to run it themselves. The upstream CRDs record
// their release and channel in the annotations gateway.networking.k8s.io/bundle-version and /channel
// (config/crd/*/gateway.networking.k8s.io_*.yaml; the bundle's safe-upgrades ValidatingAdmissionPolicy reads the same).
// This is what upstream's CRD management guide asks of implementations that bundle the CRDs
// (https://gateway-api.sigs.k8s.io/guides/crd-management/): never overwrite CRDs of an unrecognized or newer version,
// never overwrite another channel's, never remove them (lab:down leaves them). One exception to "keep": the v1.3.0
// subset an earlier gwlab installed itself is upgraded to the vendored bundle.
import {
  BUNDLE_VERSION_ANNOTATION,
  CHANNEL_ANNOTATION,
  compareBundleVersions,
  type GatewayApiChannel,
  isBundleVersion,
  type NeededKind,
  upgradeCommands,
} from '../system/manifests/gateway-api.ts';

/** The part of a CustomResourceDefinition the decision reads. */
export interface InstalledCrd {
  metadata?: { name?: string; annotations?: Record<string, string> };
  spec?: { group?: string; names?: { kind?: string }; versions?: { name: string; served?: boolean }[] };
}

export interface CrdDecisionInput {
  /** The cluster's CRDs (others than gateway.networking.k8s.io's are ignored). */
  installed: readonly InstalledCrd[];
  /** The channel lab:up would install (--gateway-api-channel). */
  channel: GatewayApiChannel;
  /** The vendored release, e.g. v1.6.1. */
  vendored: string;
  /** The oldest release the control plane runs on. */
  minimum: string;
  /** The kinds the control plane reads, at their versions. */
  needed: readonly NeededKind[];
}

export type CrdDecision =
  | { action: 'install'; channel: GatewayApiChannel; message: string }
  | { action: 'keep'; message: string; notes: string[] }
  | { action: 'stop'; message: string; hint?: string };

const GROUP = 'gateway.networking.k8s.io';
/**
 * The annotation of the generated v1.3.0 subset gwlab installed before it vendored upstream's bundle: CRDs that all
 * carry it are gwlab's own (applied by its field manager), and are upgraded in place like a fresh install.
 */
const EARLIER_GWLAB_SUBSET = 'gateway.gwvendor.dev/subset';

/** What the installed CRDs say of themselves: the lowest bundle version among them, and their channel. */
function describeInstalled(crds: readonly InstalledCrd[]): { version?: string; unversioned: number; channel: string } {
  let version: string | undefined;
  let unversioned = 0;
  let experimental = false;
  for (const c of crds) {
    const a = c.metadata?.annotations ?? {};
    if (a[CHANNEL_ANNOTATION] === 'experimental') experimental = true;
    const v = a[BUNDLE_VERSION_ANNOTATION];
    if (!isBundleVersion(v)) unversioned++;
    else if (!version || compareBundleVersions(v, version) < 0) version = v;
  }
  return { version, unversioned, channel: experimental ? 'experimental' : 'standard' };
}

/** The needed kinds the CRDs do not serve at the needed version, each said in words. */
function missingKinds(crds: readonly InstalledCrd[], needed: readonly NeededKind[]): string[] {
  const out: string[] = [];
  for (const n of needed) {
    const crd = crds.find((c) => c.spec?.names?.kind === n.kind);
    if (!crd) out.push(`${n.kind} is not installed`);
    else if (!crd.spec?.versions?.some((v) => v.name === n.version && v.served))
      out.push(
        `${n.kind} is not served at ${n.version} (served: ${
          (crd.spec?.versions ?? [])
            .filter((v) => v.served)
            .map((v) => v.name)
            .join(', ') || 'none'
        })`,
      );
  }
  return out;
}

export function decideGatewayApiCrds(input: CrdDecisionInput): CrdDecision {
  const crds = input.installed.filter((c) => c.spec?.group === GROUP);
  if (crds.length === 0) {
    return {
      action: 'install',
      channel: input.channel,
      message: `none installed: installing the vendored ${input.vendored} ${input.channel} bundle`,
    };
  }
  if (crds.every((c) => c.metadata?.annotations?.[EARLIER_GWLAB_SUBSET])) {
    return {
      action: 'install',
      channel: input.channel,
      message:
        `the cluster has the Gateway API subset an earlier gwlab installed (${describeInstalled(crds).version ?? 'no version'}): ` +
        `replacing it with the vendored ${input.vendored} ${input.channel} bundle`,
    };
  }
  const { version, unversioned, channel } = describeInstalled(crds);
  const what = `${version ?? 'of no known bundle version'} (${channel} channel)`;
  const missing = missingKinds(crds, input.needed);
  const older = version !== undefined && compareBundleVersions(version, input.minimum) < 0;
  const newer = version !== undefined && compareBundleVersions(version, input.vendored) > 0;
  if (missing.length || older) {
    const why = [
      ...(older ? [`the control plane needs ${input.minimum} or later`] : []),
      ...missing.map((m) => `${m}, which the control plane reads`),
    ].join('; ');
    if (newer) {
      return {
        action: 'stop',
        message: `the cluster's Gateway API CRDs are ${what}, newer than the vendored ${input.vendored}, but ${why}. Nothing was changed.`,
      };
    }
    const cmd = upgradeCommands(channel as GatewayApiChannel);
    // Some are an earlier gwlab's subset (beside others'): its field manager owns their fields, so a user's apply
    // conflicts with it; forcing takes them over (https://kubernetes.io/docs/reference/using-api/server-side-apply/#conflicts).
    const force = crds.some((c) => c.metadata?.annotations?.[EARLIER_GWLAB_SUBSET]);
    const forced = (c: string) => (force ? c.replace('--server-side', '--server-side --force-conflicts') : c);
    return {
      action: 'stop',
      message:
        `the cluster's Gateway API CRDs are ${what}: ${why}. Nothing was changed (lab:up never downgrades or ` +
        `replaces a cluster's Gateway API CRDs)`,
      hint:
        `upgrade them, then run lab:up again: ${forced(cmd.release)}\n` +
        `  (or this repository's copy of the same ${input.vendored} bundle: ${forced(cmd.vendored)})` +
        (force
          ? `\n  (--force-conflicts: some of them are the subset an earlier gwlab applied, whose fields it owns)`
          : ''),
    };
  }
  const notes: string[] = [];
  if (unversioned) notes.push(`${unversioned} of them carry no ${BUNDLE_VERSION_ANNOTATION} annotation`);
  if (channel !== input.channel)
    notes.push(`they are the ${channel} channel; --gateway-api-channel ${input.channel} is not applied over them`);
  const verdict = newer
    ? `newer than the vendored ${input.vendored}`
    : version
      ? `at least the ${input.minimum} the control plane needs`
      : `serving every kind the control plane reads`;
  return {
    action: 'keep',
    message: `the cluster has Gateway API ${what}, ${verdict}: keeping them as they are`,
    notes,
  };
}
