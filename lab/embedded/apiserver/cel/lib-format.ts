// Kubernetes' `format` CEL library (k8s.io/apiserver/pkg/cel/library/format.go, Kubernetes 1.32):
// `format.dns1123Label()` … `format.datetime()`, `format.named(name)` (an optional), and `<format>.validate(s)`,
// which is `optional.none()` for a valid string and `optional.of([errors])` otherwise, with apimachinery's messages
// (names.ts) for the name formats and strfmt's (formats.ts) for the others. Note that, as in cel-go, an optional is
// never equal to `null`.
import type { CelFunc, CelValue } from '@bufbuild/cel';
import { celList } from '@bufbuild/cel';
import { checkFormat } from '../formats.ts';
import { isQualifiedName, isValidLabelValue, nameErrors } from '../names.ts';
import { fn, method, OpaqueValue } from './func.ts';
import { NONE, OptionalValue } from './lib-optional.ts';

export class FormatValue extends OpaqueValue {
  readonly celTypeName = 'kubernetes.NamedFormat';
  readonly name: string;
  readonly check: (s: string) => string[];
  constructor(name: string, check: (s: string) => string[]) {
    super();
    this.name = name;
    this.check = check;
  }
  equals(o: OpaqueValue): boolean {
    return o instanceof FormatValue && o.name === this.name;
  }
}

const strfmt = (format: string, message: string) => (s: string) => (checkFormat(format, s) ? [] : [message]);

const FORMATS: Record<string, (s: string) => string[]> = {
  dns1123Label: (s) => nameErrors(s, 'label'),
  dns1123Subdomain: (s) => nameErrors(s, 'subdomain'),
  dns1035Label: (s) => nameErrors(s, 'dns1035'),
  qualifiedName: isQualifiedName,
  dns1123LabelPrefix: (s) => nameErrors(s, 'label', true),
  dns1123SubdomainPrefix: (s) => nameErrors(s, 'subdomain', true),
  dns1035LabelPrefix: (s) => nameErrors(s, 'dns1035', true),
  labelValue: isValidLabelValue,
  uri: (s) => (checkFormat('uri', s) ? [] : [`parse "${s}": invalid URI for request`]),
  uuid: strfmt('uuid', 'does not match the UUID format'),
  byte: strfmt('byte', 'invalid base64'),
  date: strfmt('date', 'invalid date'),
  datetime: strfmt('datetime', 'invalid datetime'),
};

const values = new Map(Object.entries(FORMATS).map(([n, f]) => [n, new FormatValue(n, f)]));

export const formatLibrary: CelFunc[] = [
  ...[...values].map(([n, v]) => fn(`format.${n}`, 0, () => v as unknown as CelValue)),
  fn('format.named', 1, ([n]) => {
    if (typeof n !== 'string') return undefined;
    const v = values.get(n);
    return (v ? new OptionalValue(v as unknown as CelValue) : NONE) as unknown as CelValue;
  }),
  method('validate', 1, (t, [s]) => {
    if (!(t instanceof FormatValue) || typeof s !== 'string') return undefined;
    const errs = t.check(s);
    return (errs.length ? new OptionalValue(celList(errs) as unknown as CelValue) : NONE) as unknown as CelValue;
  }),
];
