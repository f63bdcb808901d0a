// What /snapshots/krt shows of an input object: without managedFields and kubectl's last-applied annotation (noise
// in a debug dump), a Secret without its values, a GatewayParameters without its env values. The pipeline itself
// keeps every object as read; this is only the view (pipeline.ts passes it to each input collection).
import type { GatewayParameters, KObject, Secret } from './model.ts';

/** The view of one watched kind's objects in /snapshots/krt. */
export function krtView(kind: string): (o: any) => unknown {
  if (kind === 'GatewayParameters') return redactGatewayParameters;
  if (kind === 'Secret') return redactSecret;
  return stripNoise;
}

function stripNoise<T extends { metadata: KObject['metadata'] }>(o: T): T {
  const m = o.metadata as KObject['metadata'] & { managedFields?: unknown };
  if (!m.managedFields && !m.annotations?.['kubectl.kubernetes.io/last-applied-configuration']) return o;
  const { managedFields: _mf, ...meta } = m;
  if (meta.annotations?.['kubectl.kubernetes.io/last-applied-configuration']) {
    const { 'kubectl.kubernetes.io/last-applied-configuration': _l, ...rest } = meta.annotations;
    meta.annotations = rest;
  }
  return { ...o, metadata: meta };
}

/** What /snapshots/krt shows of a Secret: its type and the names of its keys, never their values. */
function redactSecret(o: Secret): unknown {
  const c = stripNoise(o);
  return { ...c, data: Object.fromEntries(Object.keys(c.data ?? {}).map((k) => [k, '<redacted>'])) };
}

/**
 * What /snapshots/krt shows of a GatewayParameters: its env values can carry credentials (a token passed to the
 * proxy), so only their names are shown. The pipeline itself keeps the object as read.
 */
function redactGatewayParameters(o: GatewayParameters): unknown {
  const c = stripNoise(o);
  const env = c.spec?.kube?.envoyContainer?.env;
  if (!env?.some((e) => e.value !== undefined)) return c;
  return {
    ...c,
    spec: {
      ...c.spec,
      kube: {
        ...c.spec!.kube,
        envoyContainer: {
          ...c.spec!.kube!.envoyContainer,
          env: env.map((e) => (e.value === undefined ? e : { ...e, value: '<redacted>' })),
        },
      },
    },
  };
}
