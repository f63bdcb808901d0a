// Test helpers: a control plane without a cluster (inputs loaded from YAML), on free ports, logging to stderr only
// when GWVENDOR_TEST_LOG is set.
import { LogRegistry } from '../shared/log.ts';
import { ControlPlane, type ControlPlaneOptions } from './controlplane.ts';
import type { KObject } from './model.ts';
import { parseYamlObjects } from './translate.ts';

export function testLogs(): LogRegistry {
  const level = process.env.GWVENDOR_TEST_LOG ? 'debug' : 'off';
  return new LogRegistry({ level, sink: (l) => process.stderr.write(l + '\n') });
}

export function loadObjects(cp: ControlPlane, objects: KObject[]): void {
  for (const o of objects) {
    const c = cp.pipeline.inputFor(o.kind);
    if (!c) throw new Error(`kind ${o.kind} is not read by the control plane`);
    const namespaced = o.kind !== 'GatewayClass' && o.kind !== 'Namespace';
    c.upsert(namespaced ? { ...o, metadata: { namespace: 'default', ...o.metadata } } : o);
  }
}

/** Starts a control plane on free ports with the given resources, already translated. */
export async function startOfflineControlPlane(
  yaml: string,
  opts: Partial<ControlPlaneOptions> = {},
): Promise<ControlPlane> {
  const cp = new ControlPlane({
    validation: 'strict',
    logs: testLogs(),
    xdsHost: '127.0.0.1',
    xdsPort: 0,
    adminPort: 0,
    ...opts,
  });
  loadObjects(cp, parseYamlObjects(yaml));
  await cp.start();
  cp.startSync();
  return cp;
}
