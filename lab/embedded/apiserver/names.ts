// The string validators of Kubernetes' apimachinery (k8s.io/apimachinery v0.32: pkg/util/validation/validation.go,
// pkg/api/validation/generic.go and path/name.go), with their exact messages and order: each returns every message
// that applies, the length limit first (`must be no more than 253 characters`) and the pattern after, as
// IsDNS1123Subdomain does when both fail. validation.ts turns each message into one field error, as
// ValidateObjectMeta does. Written here because no npm package reproduces apimachinery's messages; they are what
// kubectl users see, and the tests compare them with Kubernetes' own.

const DNS1123_LABEL_FMT = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const DNS1123_SUBDOMAIN_FMT = `${DNS1123_LABEL_FMT}(\\.${DNS1123_LABEL_FMT})*`;
const DNS1035_LABEL_FMT = '[a-z]([-a-z0-9]*[a-z0-9])?';
const QUALIFIED_NAME_FMT = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const LABEL_VALUE_FMT = `(${QUALIFIED_NAME_FMT})?`;
const CONFIG_MAP_KEY_FMT = '[-._a-zA-Z0-9]+';

const whole = (fmt: string) => new RegExp(`^${fmt}$`);
const DNS1123_LABEL = whole(DNS1123_LABEL_FMT);
const DNS1123_SUBDOMAIN = whole(DNS1123_SUBDOMAIN_FMT);
const DNS1035_LABEL = whole(DNS1035_LABEL_FMT);
const QUALIFIED_NAME = whole(QUALIFIED_NAME_FMT);
const LABEL_VALUE = whole(LABEL_VALUE_FMT);
const CONFIG_MAP_KEY = whole(CONFIG_MAP_KEY_FMT);

const QUALIFIED_NAME_MSG =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

export function maxLenError(length: number): string {
  return `must be no more than ${length} characters`;
}

export function regexError(msg: string, fmt: string, ...examples: string[]): string {
  if (!examples.length) return `${msg} (regex used for validation is '${fmt}')`;
  return `${msg} (e.g. ${examples.map((e) => `'${e}', `).join(' or ')}regex used for validation is '${fmt}')`;
}

export function isDNS1123Label(value: string): string[] {
  const errs: string[] = [];
  if (value.length > 63) errs.push(maxLenError(63));
  if (!DNS1123_LABEL.test(value)) {
    // A valid subdomain that is not a valid label: the length was checked, so it has dots.
    if (DNS1123_SUBDOMAIN.test(value)) errs.push('must not contain dots');
    else
      errs.push(
        regexError(
          "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
          DNS1123_LABEL_FMT,
          'my-name',
          '123-abc',
        ),
      );
  }
  return errs;
}

export function isDNS1123Subdomain(value: string): string[] {
  const errs: string[] = [];
  if (value.length > 253) errs.push(maxLenError(253));
  if (!DNS1123_SUBDOMAIN.test(value))
    errs.push(
      regexError(
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
        DNS1123_SUBDOMAIN_FMT,
        'example.com',
      ),
    );
  return errs;
}

export function isDNS1035Label(value: string): string[] {
  const errs: string[] = [];
  if (value.length > 63) errs.push(maxLenError(63));
  if (!DNS1035_LABEL.test(value))
    errs.push(
      regexError(
        "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character",
        DNS1035_LABEL_FMT,
        'my-name',
        'abc-123',
      ),
    );
  return errs;
}

/** path.IsValidPathSegmentName: RBAC object names. */
export function isValidPathSegmentName(value: string): string[] {
  if (value === '.' || value === '..') return [`may not be '${value}'`];
  return ['/', '%'].filter((c) => value.includes(c)).map((c) => `may not contain '${c}'`);
}

/** Label keys, annotation keys (lower-cased by the caller) and finalizers: `[prefix/]name`. */
export function isQualifiedName(value: string): string[] {
  const errs: string[] = [];
  const parts = value.split('/');
  let name: string;
  if (parts.length === 1) name = parts[0];
  else if (parts.length === 2) {
    const prefix = parts[0];
    name = parts[1];
    if (!prefix.length) errs.push('prefix part must be non-empty');
    else errs.push(...isDNS1123Subdomain(prefix).map((m) => `prefix part ${m}`));
  } else {
    return [
      `a qualified name ${regexError(QUALIFIED_NAME_MSG, QUALIFIED_NAME_FMT, 'MyName', 'my.name', '123-abc')} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
    ];
  }
  if (!name.length) errs.push('name part must be non-empty');
  else if (name.length > 63) errs.push(`name part ${maxLenError(63)}`);
  if (!QUALIFIED_NAME.test(name))
    errs.push(`name part ${regexError(QUALIFIED_NAME_MSG, QUALIFIED_NAME_FMT, 'MyName', 'my.name', '123-abc')}`);
  return errs;
}

export function isValidLabelValue(value: string): string[] {
  const errs: string[] = [];
  if (value.length > 63) errs.push(maxLenError(63));
  if (!LABEL_VALUE.test(value))
    errs.push(
      regexError(
        "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
        LABEL_VALUE_FMT,
        'MyValue',
        'my_value',
        '12345',
      ),
    );
  return errs;
}

/** Keys of ConfigMap data/binaryData and Secret data. */
export function isConfigMapKey(value: string): string[] {
  const errs: string[] = [];
  if (value.length > 253) errs.push(maxLenError(253));
  if (!CONFIG_MAP_KEY.test(value))
    errs.push(
      regexError(
        "a valid config key must consist of alphanumeric characters, '-', '_' or '.'",
        CONFIG_MAP_KEY_FMT,
        'key.name',
        'KEY_NAME',
        'key-name',
      ),
    );
  if (value === '.') errs.push("must not be '.'");
  else if (value === '..') errs.push("must not be '..'");
  else if (value.startsWith('..')) errs.push("must not start with '..'");
  return errs;
}

/** How a kind's metadata.name is validated (its ValidateNameFunc). */
export type NameRule = 'subdomain' | 'label' | 'dns1035' | 'path';

/**
 * A name (or, with `prefix`, a generateName) under `rule`. A generateName may end in '-': apimachinery's
 * maskTrailingDash replaces its last two characters by 'a' before checking, and so does this.
 */
export function nameErrors(name: string, rule: NameRule, prefix = false): string[] {
  if (rule === 'path')
    return prefix
      ? ['/', '%'].filter((c) => name.includes(c)).map((c) => `may not contain '${c}'`)
      : isValidPathSegmentName(name);
  const v = prefix && name.length > 1 && name.endsWith('-') ? `${name.slice(0, -2)}a` : name;
  if (rule === 'label') return isDNS1123Label(v);
  if (rule === 'dns1035') return isDNS1035Label(v);
  return isDNS1123Subdomain(v);
}
