// The pure side of describe.ts: a pod object and its events → summary, reasons, text. (describePods/eventsFor against
// a real pod are in logs.test.ts, which shares its test cluster.)
import type { CoreV1Event, V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { formatPodSummary, notReadyReasons, summarizeEvent, summarizePod } from './describe.ts';

const pulling: V1Pod = {
  metadata: { name: 'gw-7d9-abc', namespace: 'ns1', labels: { 'app.orch.io/name': 'gw' } },
  spec: { containers: [{ name: 'proxy', image: 'gwlab.local/does-not-exist:0.0.0' }] },
  status: {
    phase: 'Pending',
    conditions: [
      { type: 'PodScheduled', status: 'True' },
      {
        type: 'Ready',
        status: 'False',
        reason: 'ContainersNotReady',
        message: 'containers with unready status: [proxy]',
      },
    ],
    containerStatuses: [
      {
        name: 'proxy',
        image: 'gwlab.local/does-not-exist:0.0.0',
        imageID: '',
        ready: false,
        restartCount: 0,
        state: {
          waiting: {
            reason: 'ImagePullBackOff',
            message: 'Back-off pulling image "gwlab.local/does-not-exist:0.0.0"',
          },
        },
      },
    ],
  },
};

const pullEvent: CoreV1Event = {
  metadata: { name: 'e1', namespace: 'ns1' },
  involvedObject: { kind: 'Pod', name: 'gw-7d9-abc', namespace: 'ns1' },
  type: 'Warning',
  reason: 'Failed',
  message: 'Error: ImagePullBackOff',
  count: 4,
  source: { component: 'kubelet' },
  lastTimestamp: new Date('2026-11-22T10:00:05Z'),
};

describe('describe: pod summaries', () => {
  it('names the waiting reason and message of a container that cannot start', () => {
    const s = summarizePod(pulling, [summarizeEvent(pullEvent)]);
    expect(s).toMatchObject({ name: 'gw-7d9-abc', phase: 'Pending', ready: false, deleting: false });
    expect(s.containers[0]).toMatchObject({ state: 'waiting', reason: 'ImagePullBackOff', restartCount: 0 });
    expect(notReadyReasons(s)).toEqual([
      'container proxy waiting (ImagePullBackOff): Back-off pulling image "gwlab.local/does-not-exist:0.0.0"',
    ]);
    expect(s.events[0]).toEqual({
      object: 'Pod/gw-7d9-abc',
      type: 'Warning',
      reason: 'Failed',
      message: 'Error: ImagePullBackOff',
      count: 4,
      time: '2026-11-22T10:00:05.000Z',
      source: 'kubelet',
    });
    const text = formatPodSummary(s);
    expect(text).toContain('Pod ns1/gw-7d9-abc: Pending, not Ready');
    expect(text).toContain(
      'proxy (gwlab.local/does-not-exist:0.0.0): waiting ImagePullBackOff, ready=false, restarts=0',
    );
    expect(text).toContain('Conditions: Ready=False (ContainersNotReady)');
    expect(text).toMatch(/Warning {1}Failed +\(x4\) kubelet: Error: ImagePullBackOff/);
  });

  it('has no reasons for a running, ready pod, and says Events: <none>', () => {
    const ready: V1Pod = {
      ...pulling,
      status: {
        phase: 'Running',
        conditions: [{ type: 'Ready', status: 'True' }],
        containerStatuses: [
          {
            name: 'proxy',
            image: 'gwlab.local/system:0.1.0',
            imageID: '',
            ready: true,
            restartCount: 0,
            state: { running: { startedAt: new Date('2026-11-22T10:00:00Z') } },
          },
        ],
      },
    };
    const s = summarizePod(ready);
    expect(notReadyReasons(s)).toEqual([]);
    expect(s.containers[0].startedAt).toBe('2026-11-22T10:00:00.000Z');
    expect(formatPodSummary(s)).toMatch(/Running, Ready\n.*running, ready=true, restarts=0\n {2}Events: <none>$/);
  });
});
