// The Kubernetes CEL environment (env.ts) evaluating the libraries kube-apiserver 1.32 adds, each case checked
// against the library's documented behaviour (k8s.io/apiserver/pkg/cel/library/{lists,regex,urls,ip,cidr,quantity,
// format}.go doc comments and their *_test.go tables), plus schema-driven values (values.ts) and escaping.
import { CelScalar, isCelError, parse, plan } from '@bufbuild/cel';
import { describe, expect, it } from 'vitest';
import type { JSONSchemaProps } from '../json-schema.ts';
import { kubernetesCelEnv } from './env.ts';
import { escapeProperty } from './escaping.ts';
import { toCel } from './values.ts';

const env = kubernetesCelEnv({ self: CelScalar.DYN, oldSelf: CelScalar.DYN });
function run(expr: string, self?: unknown, oldSelf?: unknown): unknown {
  const r = plan(env, parse(expr))({ self: (self ?? null) as never, oldSelf: (oldSelf ?? null) as never });
  return isCelError(r) ? `error: ${r.message}` : r;
}

describe('Kubernetes CEL libraries', () => {
  it.each([
    // lists
    ['[1, 2, 3].isSorted()', true],
    ["['b', 'a'].isSorted()", false],
    ['[1, 2, 3].sum() == 6', true],
    ['[1.5, 2.5].sum() == 4.0', true],
    ['[3, 1, 2].min() == 1 && [3, 1, 2].max() == 3', true],
    ['[1, 2, 1].indexOf(1) == 0 && [1, 2, 1].lastIndexOf(1) == 2', true],
    // regex
    ["'abc 123 def 456'.find('[0-9]+') == '123'", true],
    ["'abc'.find('[0-9]+') == ''", true],
    ["'abc 123 def 456'.findAll('[0-9]+') == ['123', '456']", true],
    ["'abc 123 def 456'.findAll('[0-9]+', 1) == ['123']", true],
    // strings (cel-go ext)
    ["'a/b/c'.split('/') == ['a', 'b', 'c']", true],
    ["'AbC'.lowerAscii() == 'abc' && 'abc'.upperAscii() == 'ABC'", true],
    ["'hello'.substring(1, 3) == 'el' && '  x '.trim() == 'x'", true],
    ["['a', 'b'].join('-') == 'a-b'", true],
    ["'x'.matches('^(?i)X$')", true],
    // URLs
    ["url('https://example.com:8080/path?x=1&x=2').getHost() == 'example.com:8080'", true],
    ["url('https://example.com:8080/path').getHostname() == 'example.com'", true],
    ["url('https://example.com:8080/path').getPort() == '8080'", true],
    ["url('https://example.com/a%20b').getEscapedPath() == '/a%20b'", true],
    ["url('https://example.com/?x=1&x=2').getQuery()['x'] == ['1', '2']", true],
    ["url('/absolute-path').getScheme() == ''", true],
    ["isURL('https://example.com') && !isURL('example.com') && isURL('/path')", true],
    // IP / CIDR
    ["isIP('10.0.0.1') && isIP('2001:db8::1') && !isIP('1.2.3') && !isIP('10.0.0.01')", true],
    ["!isIP('::ffff:1.2.3.4') && !isIP('fe80::1%eth0')", true],
    ["ip('10.0.0.1').family() == 4 && ip('::1').family() == 6", true],
    ["ip('127.0.0.1').isLoopback() && ip('::1').isLoopback()", true],
    ["ip('0.0.0.0').isUnspecified() && ip('169.254.1.1').isLinkLocalUnicast()", true],
    ["ip('8.8.8.8').isGlobalUnicast() && !ip('127.0.0.1').isGlobalUnicast()", true],
    ["ip.isCanonical('2001:db8::1') && !ip.isCanonical('2001:DB8::1')", true],
    ["string(ip('2001:db8:0:0:0:0:0:1')) == '2001:db8::1'", true],
    ["cidr('10.0.0.0/8').containsIP(ip('10.1.2.3')) && !cidr('10.0.0.0/8').containsIP('11.0.0.1')", true],
    ["cidr('10.0.0.0/8').containsCIDR('10.1.0.0/16') && !cidr('10.1.0.0/16').containsCIDR('10.0.0.0/8')", true],
    ["cidr('10.1.2.3/8').masked() == cidr('10.0.0.0/8') && cidr('10.1.2.3/8').ip() == ip('10.1.2.3')", true],
    ["cidr('10.0.0.0/12').containsIP('10.15.255.255') && !cidr('10.0.0.0/12').containsIP('10.16.0.0')", true],
    [
      "cidr('2001:db8::/33').containsIP('2001:db8:7fff::1') && !cidr('2001:db8::/33').containsIP('2001:db8:8000::')",
      true,
    ],
    [
      "!cidr('0.0.0.0/0').containsIP('::1') && cidr('::/0').containsIP('::1') && cidr('0.0.0.0/0').containsIP('1.2.3.4')",
      true,
    ],
    ["string(cidr('2001:db8:ffff::1/24').masked()) == '2001:d00::/24'", true],
    ["cidr('192.168.0.0/24').prefixLength() == 24 && isCIDR('10.0.0.0/8') && !isCIDR('10.0.0.0/33')", true],
    // quantity
    ["quantity('1Gi').isGreaterThan(quantity('1000Mi'))", true],
    ["quantity('500m').isLessThan(quantity('1'))", true],
    ["quantity('1.5Gi').compareTo(quantity('1536Mi')) == 0", true],
    ["quantity('1k').asInteger() == 1000 && !quantity('1.5').isInteger()", true],
    ["quantity('1').add(quantity('500m')) == quantity('1500m') && quantity('2').sub(1) == quantity('1')", true],
    ["quantity('-3').sign() == -1 && isQuantity('10Mi') && !isQuantity('10MB')", true],
    // format
    ["!format.dns1123Label().validate('my-label').hasValue()", true],
    ["format.dns1123Label().validate('My_Label').hasValue()", true],
    ["format.dns1123Subdomain().validate('apiextensions.k8s.io').hasValue() == false", true],
    ["format.qualifiedName().validate('apiextensions.k8s.io/v1beta1').hasValue() == false", true],
    ["format.named('uuid').value().validate('123e4567-e89b-12d3-a456-426614174000').hasValue() == false", true],
    ["!format.named('nope').hasValue()", true],
    // optionals
    ['optional.of(1).hasValue() && !optional.none().hasValue()', true],
    ['optional.none().orValue(5) == 5 && optional.of(1).value() == 1', true],
    ["optional.ofNonZeroValue('').hasValue() == false", true],
    // runtime errors keep cel-go's wording where the rules show them
    ["'x'.find('[')", 'error'],
  ])('%s', (expr, want) => {
    const got = run(expr);
    if (want === 'error') expect(String(got)).toMatch(/^error: /);
    else expect(got).toBe(want);
  });

  it("format.<name>().validate() lists apimachinery's messages", () => {
    const r = plan(env, parse("format.dns1123Label().validate('My_Label').value()"))({ self: null, oldSelf: null });
    expect([...(r as Iterable<string>)][0]).toContain(
      "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-'",
    );
  });
});

describe('values from the OpenAPI schema', () => {
  const schema: JSONSchemaProps = {
    type: 'object',
    properties: {
      count: { type: 'integer' },
      ratio: { type: 'number' },
      port: { 'x-kubernetes-int-or-string': true },
      namespace: { type: 'string' },
      'dashed-name': { type: 'string' },
      anything: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
      labels: { type: 'object', additionalProperties: { type: 'string' } },
      set: { type: 'array', items: { type: 'integer' }, 'x-kubernetes-list-type': 'set' },
      list: { type: 'array', items: { type: 'integer' } },
      keyed: {
        type: 'array',
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['name'],
        items: { type: 'object', properties: { name: { type: 'string' }, v: { type: 'integer' } } },
      },
      when: { type: 'string', format: 'date-time' },
      timeout: { type: 'string', format: 'duration' },
    },
  };
  const obj = {
    count: 3,
    ratio: 2,
    port: 8080,
    namespace: 'ns',
    'dashed-name': 'x',
    anything: { n: 1, f: 1.5, nested: { a: [1] } },
    labels: { 'app.kubernetes.io/name': 'web' },
    set: [1, 2],
    list: [1, 2],
    keyed: [
      { name: 'a', v: 1 },
      { name: 'b', v: 2 },
    ],
    when: '2024-01-02T03:04:05Z',
    timeout: '1h30m',
  };
  const self = toCel(schema, obj);
  const old = toCel(schema, { ...obj, set: [2, 1], list: [2, 1], keyed: [obj.keyed[1], obj.keyed[0]] });
  it.each([
    ['type(self.count) == int && type(self.ratio) == double', true],
    ['self.ratio == 2.0 && self.count + 1 == 4', true],
    ['self.port == 8080', true],
    ['self.__namespace__ == "ns" && self.dashed__dash__name == "x"', true],
    ['self.anything.n == 1 && self.anything.f == 1.5 && self.anything.nested.a[0] == 1', true],
    ["self.labels['app.kubernetes.io/name'] == 'web'", true],
    ['self.set == oldSelf.set', true],
    ['self.list == oldSelf.list', false],
    ['self.keyed == oldSelf.keyed', true],
    ["self.when == timestamp('2024-01-02T03:04:05Z') && self.timeout == duration('90m')", true],
    ['has(self.count) && !has(self.labels.other)', true],
    ['self.labels.other', 'error'],
  ])('%s', (expr, want) => {
    const got = run(expr, self, old);
    if (want === 'error') expect(String(got)).toMatch(/^error: /);
    else expect(got).toBe(want);
  });

  it('escapes property names as kube-apiserver does', () => {
    expect(escapeProperty('namespace')).toBe('__namespace__');
    expect(escapeProperty('a.b-c/d')).toBe('a__dot__b__dash__c__slash__d');
    expect(escapeProperty('x__y')).toBe('x__underscores__y');
    expect(escapeProperty('1abc')).toBeUndefined();
  });
});
