// Names, labels, annotations and keys get apimachinery's messages in apimachinery's order (names.ts): the length limit
// when only the length is wrong, both messages when both are (IsDNS1123Subdomain). Unit cases copy the strings of
// k8s.io/apimachinery v0.32 pkg/util/validation; the end-to-end case is what kubectl 1.32 prints, and stores nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  isConfigMapKey,
  isDNS1035Label,
  isDNS1123Label,
  isDNS1123Subdomain,
  isQualifiedName,
  isValidLabelValue,
  nameErrors,
} from './names.ts';
import { api, closeApiAgents } from './testing/requests.ts';
import { startTestLab, type TestLab } from './testing/test-lab.ts';

const SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const LABEL_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const DNS1035_MSG =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";
const QNAME_MSG =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const VALUE_MSG =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

describe('apimachinery validators', () => {
  it('DNS-1123 subdomains: the length limit alone, or with the pattern when both fail', () => {
    expect(isDNS1123Subdomain('a'.repeat(253))).toEqual([]);
    expect(isDNS1123Subdomain('a'.repeat(254))).toEqual(['must be no more than 253 characters']);
    expect(isDNS1123Subdomain('A'.repeat(254))).toEqual(['must be no more than 253 characters', SUBDOMAIN_MSG]);
    expect(isDNS1123Subdomain('Bad_Name')).toEqual([SUBDOMAIN_MSG]);
  });

  it('DNS-1123 and DNS-1035 labels: 63 characters, dots, a leading digit', () => {
    expect(isDNS1123Label('a'.repeat(63))).toEqual([]);
    expect(isDNS1123Label('a'.repeat(64))).toEqual(['must be no more than 63 characters']);
    expect(isDNS1123Label('a.b')).toEqual(['must not contain dots']);
    expect(isDNS1123Label(`${'a'.repeat(64)}_`)).toEqual(['must be no more than 63 characters', LABEL_MSG]);
    expect(isDNS1035Label('1abc')).toEqual([DNS1035_MSG]);
    expect(isDNS1035Label('a'.repeat(64))).toEqual(['must be no more than 63 characters']);
  });

  it('qualified names, label values, config keys, RBAC names and generateName prefixes', () => {
    expect(isQualifiedName('example.com/a')).toEqual([]);
    expect(isQualifiedName(`a/${'b'.repeat(64)}`)).toEqual(['name part must be no more than 63 characters']);
    expect(isQualifiedName('/a')).toEqual(['prefix part must be non-empty']);
    expect(isQualifiedName('Bad_/x')[0]).toBe(`prefix part ${SUBDOMAIN_MSG}`);
    expect(isQualifiedName('-a')).toEqual([QNAME_MSG]);
    expect(isQualifiedName('a/b/c')[0]).toMatch(
      /^a qualified name must consist of .* with an optional DNS subdomain prefix and '\/' \(e\.g\. 'example\.com\/MyName'\)$/,
    );
    expect(isValidLabelValue('v'.repeat(64))).toEqual(['must be no more than 63 characters']);
    expect(isValidLabelValue('-x')).toEqual([VALUE_MSG]);
    expect(isConfigMapKey('..a')).toEqual(["must not start with '..'"]);
    expect(nameErrors('a/b%', 'path')).toEqual(["may not contain '/'", "may not contain '%'"]);
    expect(nameErrors('..', 'path')).toEqual(["may not be '..'"]);
    expect(nameErrors('web-', 'subdomain', true)).toEqual([]);
    expect(nameErrors('web-', 'subdomain')).toEqual([SUBDOMAIN_MSG]);
  });
});

describe('through kubectl', () => {
  let lab: TestLab;
  beforeAll(async () => {
    lab = await startTestLab({ labName: 'names' });
  });
  afterAll(async () => {
    await closeApiAgents();
    await lab?.stop();
  });

  it('a 254-letter name gets the 253-character limit; a namespace or Service of 64 the 63 one; nothing is stored', async () => {
    const long = 'a'.repeat(254);
    const cm = await lab.kubectl(['create', 'configmap', long]);
    expect(cm.code).not.toBe(0);
    expect(cm.stderr).toContain(
      `error: failed to create configmap: ConfigMap "${long}" is invalid: metadata.name: Invalid value: "${long}": must be no more than 253 characters\n`,
    );
    expect(cm.stderr).not.toContain('RFC 1123');
    const ns = await lab.kubectl(['create', 'namespace', 'n'.repeat(64)]);
    expect(ns.stderr).toContain(
      `metadata.name: Invalid value: "${'n'.repeat(64)}": must be no more than 63 characters`,
    );
    const svc = await lab.kubectl(['create', 'service', 'clusterip', 's'.repeat(64), '--tcp=80']);
    expect(svc.stderr).toContain(
      `metadata.name: Invalid value: "${'s'.repeat(64)}": must be no more than 63 characters`,
    );
    const digit = await lab.kubectl(['create', 'service', 'clusterip', '1web', '--tcp=80']);
    expect(digit.stderr).toContain(`metadata.name: Invalid value: "1web": ${DNS1035_MSG}`);

    // Both messages when both rules fail, each a cause naming metadata.name.
    const both = await api(lab, 'POST', '/api/v1/namespaces/default/configmaps', {
      body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'A'.repeat(254) } },
    });
    expect(both.status).toBe(422);
    expect(both.json.details.causes).toEqual([
      {
        reason: 'FieldValueInvalid',
        field: 'metadata.name',
        message: `Invalid value: "${'A'.repeat(254)}": must be no more than 253 characters`,
      },
      {
        reason: 'FieldValueInvalid',
        field: 'metadata.name',
        message: `Invalid value: "${'A'.repeat(254)}": ${SUBDOMAIN_MSG}`,
      },
    ]);
    const label = await lab.kubectl(['create', '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'ok', labels: { tier: 'v'.repeat(64) } },
      }),
    });
    expect(label.stderr).toContain(
      `metadata.labels: Invalid value: "${'v'.repeat(64)}": must be no more than 63 characters`,
    );

    for (const kind of ['configmaps', 'services']) {
      const list = JSON.parse(await lab.k(['get', kind, '-o', 'json']));
      expect(list.items.map((o: any) => o.metadata.name)).toEqual(kind === 'services' ? ['kubernetes'] : []);
    }
    expect(JSON.parse(await lab.k(['get', 'ns', '-o', 'json'])).items.map((o: any) => o.metadata.name)).not.toContain(
      'n'.repeat(64),
    );
  });
});
