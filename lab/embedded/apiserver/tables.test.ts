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

// The tables of a name, the kind's own columns and an age (namedTable): columns and cells line up as kubectl's
// printers write them.
describe('name, own columns, age', () => {
  const row = (kind: string, obj: Record<string, unknown>) => {
    const table = builtinTables[kind]!;
    const created = new Date(Date.now() - 90_000).toISOString();
    const o = { metadata: { name: 'x', namespace: 'n', creationTimestamp: created }, ...obj } as K8sObject;
    return Object.fromEntries(table.columns.map((c, i) => [c.name, table.cells(o, Date.now())[i]]));
  };

  it('a Secret, an EndpointSlice, a ValidatingAdmissionPolicyBinding', () => {
    expect(row('secrets', { type: 'kubernetes.io/tls', data: { a: '', b: '' } })).toEqual({
      Name: 'x',
      Type: 'kubernetes.io/tls',
      Data: 2,
      Age: '90s',
    });
    const addresses = ['10.0.0.1', '10.0.0.2', '10.0.0.3', '10.0.0.4', '10.0.0.5'];
    expect(
      row('endpointslices', {
        addressType: 'IPv4',
        ports: [{ port: 80 }, { name: 'none' }, { port: 443 }],
        endpoints: addresses.map((a) => ({ addresses: [a] })),
      }),
    ).toEqual({
      Name: 'x',
      AddressType: 'IPv4',
      Ports: '80,443',
      Endpoints: '10.0.0.1,10.0.0.2,10.0.0.3 + 2 more...',
      Age: '90s',
    });
    expect(row('endpointslices', {})).toMatchObject({ Ports: '<unset>', Endpoints: '<unset>' });
    expect(row('validatingadmissionpolicybindings', { spec: { policyName: 'p', paramRef: { name: 'cfg' } } })).toEqual({
      Name: 'x',
      PolicyName: 'p',
      ParamRef: '*/cfg',
      Age: '90s',
    });
  });
});
