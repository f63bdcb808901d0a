// The conformance suite around the tests, as upstream's conformance/utils/suite (Gateway API v1.6.1 suite.go Setup,
// kubernetes/apply.go): the test shape (ShortName, Description, Features, Manifests), the manifests read from the
// vendored corpus (tests/upstream/gateway-api/conformance/) with the GatewayClass name put into every Gateway, and the
// suite's setup: the GatewayClass Accepted, the base manifests, the certificates and CA ConfigMaps it generates, then
// every Gateway and Pod of the three namespaces ready. Resources are applied server-side (upstream creates or updates
// them) and deleted afterwards.
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type KObj, type Kube, parseYamlDocs } from '../../lab/toolkit/kube.ts';
import { caCert, caConfigMap, rsaCert, tlsSecret } from './certificates.ts';
import type { TimeoutConfig } from './config.ts';
import { gwcMustHaveAcceptedCondition, namespacesMustBeReady } from './kubernetes.ts';

export const INFRA_NS = 'gateway-conformance-infra';
export const APP_BACKEND_NS = 'gateway-conformance-app-backend';
export const WEB_BACKEND_NS = 'gateway-conformance-web-backend';
/** The GatewayClass the suite runs against (upstream's --gateway-class flag). */
export const DEFAULT_GATEWAY_CLASS = 'gwvendor';
export const GATEWAY_API_VERSION = 'v1.6.1';

/** The vendored upstream conformance folder (base/, tests/*.yaml). */
export const UPSTREAM_CONFORMANCE = resolve(
  dirname(fileURLToPath(import.meta.url)),
  '../../tests/upstream/gateway-api/conformance',
);

/** What a test sees of the suite (upstream's ConformanceTestSuite fields the tests read). */
export interface Suite {
  kube: Kube;
  timeoutConfig: TimeoutConfig;
  controllerName: string;
  gatewayClassName: string;
}

/** One upstream test: its fields as upstream declares them; `test` registers its (sub)tests. */
export interface ConformanceTest {
  shortName: string;
  description: string;
  features: string[];
  /** Paths under upstream's conformance/ folder, e.g. `tests/httproute-simple-same-namespace.yaml`. */
  manifests: string[];
  provisional?: boolean;
  test(s: Suite): void;
}

/**
 * A manifest of the corpus as upstream's Applier prepares it (prepareResources): the suite's GatewayClass name in
 * every Gateway, its controller name in every GatewayClass.
 */
export function readConformanceManifest(
  path: string,
  names: { gatewayClassName: string; controllerName: string } & AddressPools,
): KObj[] {
  const text = readFileSync(join(UPSTREAM_CONFORMANCE, path), 'utf8');
  return parseYamlDocs(text)
    .filter((d) => d && Object.keys(d).length)
    .map((d) => {
      if (d.kind === 'Gateway') {
        const spec = { ...d.spec, gatewayClassName: names.gatewayClassName };
        if (spec.addresses?.length) spec.addresses = overlayAddresses(spec.addresses, names);
        return { ...d, spec };
      }
      if (d.kind === 'GatewayClass') return { ...d, spec: { ...d.spec, controllerName: names.controllerName } };
      return d;
    });
}

/** Upstream's UsableNetworkAddresses / UnusableNetworkAddresses (suite options; flags --usable-address...). */
export interface AddressPools {
  usableAddresses?: { type?: string; value: string }[];
  unusableAddresses?: { type?: string; value: string }[];
}

/**
 * Upstream's Applier.prepareGateway: a Gateway whose addresses hold PLACEHOLDER_USABLE_ADDRS /
 * PLACEHOLDER_UNUSABLE_ADDRS gets the suite's pools instead, after the `test/fake-invalid-type` addresses it keeps.
 */
export function overlayAddresses(
  addresses: { type?: string; value?: string }[],
  pools: AddressPools,
): { type?: string; value?: string }[] {
  const usable = addresses.some((a) => a.value === 'PLACEHOLDER_USABLE_ADDRS');
  const unusable = addresses.some((a) => a.value === 'PLACEHOLDER_UNUSABLE_ADDRS');
  if (!usable && !unusable) return addresses;
  return [
    ...addresses.filter((a) => a.type === 'test/fake-invalid-type'),
    ...(unusable ? (pools.unusableAddresses ?? []) : []),
    ...(usable ? (pools.usableAddresses ?? []) : []),
  ];
}

/** Upstream's programmatic resources of Setup: certificates, CA ConfigMaps, client certificates. */
export function programmaticResources(): KObj[] {
  const out: KObj[] = [
    tlsSecret(WEB_BACKEND_NS, 'certificate', rsaCert(['*'], 'server')),
    tlsSecret(INFRA_NS, 'tls-validity-checks-certificate', rsaCert(['*', '*.org', '*.wildcard.org'], 'server')),
    caConfigMap(WEB_BACKEND_NS, 'web-backend-cm', caCert()),
  ];
  for (const [cm, client] of [
    ['tls-validity-checks-ca-certificate', 'tls-validity-checks-client-certificate'],
    ['tls-validity-checks-per-port-ca-certificate', 'tls-validity-checks-per-port-client-certificate'],
  ]) {
    const ca = caCert();
    out.push(caConfigMap(INFRA_NS, cm, ca), tlsSecret(INFRA_NS, client, rsaCert([], 'client', ca)));
  }
  const ca = caCert();
  out.push(
    caConfigMap(INFRA_NS, 'tls-checks-ca-certificate', ca),
    tlsSecret(
      INFRA_NS,
      'tls-checks-certificate',
      rsaCert(['abc.example.com', 'spiffe://abc.example.com/test-identity', 'other.example.com'], 'server', ca),
    ),
    tlsSecret(INFRA_NS, 'tls-checks-client-certificate', rsaCert([], 'client', ca)),
    tlsSecret(INFRA_NS, 'tls-passthrough-checks-certificate', rsaCert(['abc.example.com'], 'server', ca)),
    tlsSecret(APP_BACKEND_NS, 'tls-passthrough-checks-certificate', rsaCert(['abc.example.com'], 'server', ca)),
    tlsSecret(INFRA_NS, 'tls-terminate-checks-certificate', rsaCert(['tls.example.com'], 'server', ca)),
    caConfigMap(INFRA_NS, 'mismatch-ca-certificate', caCert()),
  );
  return out;
}

/**
 * Upstream's Setup for the Gateway profiles: returns the controller name and every object it created (for cleanup).
 * `log` gets upstream's "Test Setup: ..." lines.
 */
export async function setupSuite(
  kube: Kube,
  tc: TimeoutConfig,
  gatewayClassName: string,
  log: (line: string) => void = () => {},
): Promise<{ controllerName: string; created: KObj[] }> {
  log('Test Setup: Ensuring GatewayClass has been accepted');
  const controllerName = await gwcMustHaveAcceptedCondition(kube, tc, gatewayClassName, 'True');
  log('Test Setup: Applying base manifests');
  const base = readConformanceManifest('base/manifests.yaml', { gatewayClassName, controllerName });
  await kube.apply(base);
  log('Test Setup: Applying programmatic resources');
  const programmatic = programmaticResources();
  await kube.apply(programmatic);
  log('Test Setup: Ensuring Gateways and Pods from base manifests are ready');
  await namespacesMustBeReady(kube, tc, [INFRA_NS, APP_BACKEND_NS, WEB_BACKEND_NS]);
  return { controllerName, created: [...base, ...programmatic] };
}
