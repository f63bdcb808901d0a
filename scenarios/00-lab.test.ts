// The lab the scenarios run on: the control plane is rolled out and its GatewayClass is Accepted.
import { describe, expect, it } from 'vitest';
import { useLab } from './support/lab.ts';

describe('lab', () => {
  const lab = useLab();

  it('has the control plane Ready and GatewayClass gwvendor Accepted', async () => {
    await lab.kube.waitForRollout('gwvendor', 'gwvendor-system');
    const gc = await lab.kube.waitForCondition(
      'gateway.networking.k8s.io/v1',
      'GatewayClass',
      'gwvendor',
      undefined,
      'Accepted',
    );
    expect(gc.spec.controllerName).toBe('gateway.gwvendor.dev/gwvendor');
    const pods = await lab.k(['get', 'pods', '-n', 'gwvendor-system', '-o', 'name']);
    expect(pods).toMatch(/^pod\/gwvendor-/m);
  });
});
