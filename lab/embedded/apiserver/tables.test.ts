// The Selector column of server-side tables (tables.ts) as Kubernetes' printers write it, through the one selector
// module (system/shared/selectors.ts): a Deployment's or ReplicaSet's metav1.LabelSelector by
// metav1.FormatLabelSelector (requirements sorted by key, `<none>` when empty, `<error>` for an unknown operator), a
// Service's selector map by labels.FormatLabels (sorted `k=v`). `kubectl get -o wide` shows these cells.
import { describe, expect, it } from 'vitest';
import type { K8sObject } from './store.ts';
import { builtinTables } from './tables.ts';

const selectorCell = (kind: 'deployments' | 'replicasets' | 'services', spec: Record<string, unknown>) => {
  const table = builtinTables[kind]!;
  const obj: K8sObject = { metadata: { name: 'x', namespace: 'n' }, spec };
  return table.cells(obj, Date.now())[table.columns.findIndex((c) => c.name === 'Selector')];
};

describe('the Selector column', () => {
  it('a workload: requirements sorted by key as apimachinery writes them; <none>; <error>', () => {
    const selector = {
      matchLabels: { tier: 'web', app: 'shop' },
      matchExpressions: [
        { key: 'zone', operator: 'In', values: ['b', 'a'] },
        { key: 'canary', operator: 'DoesNotExist' },
      ],
    };
    expect(selectorCell('deployments', { selector })).toBe('app=shop,!canary,tier=web,zone in (a,b)');
    expect(selectorCell('replicasets', { selector: { matchLabels: { b: '2', a: '1' } } })).toBe('a=1,b=2');
    expect(selectorCell('deployments', { selector: {} })).toBe('<none>');
    expect(selectorCell('deployments', {})).toBe('<none>');
    expect(selectorCell('deployments', { selector: { matchExpressions: [{ key: 'a', operator: 'Near' }] } })).toBe(
      '<error>',
    );
  });

  it('a Service: its selector map sorted by key; <none> without one', () => {
    expect(selectorCell('services', { selector: { tier: 'web', app: 'shop' } })).toBe('app=shop,tier=web');
    expect(selectorCell('services', {})).toBe('<none>');
  });
});
