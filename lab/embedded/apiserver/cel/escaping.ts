// CEL names of CRD properties, as kube-apiserver escapes them (k8s.io/apiserver/pkg/cel/escaping.go, Kubernetes 1.32):
// a property named after a CEL reserved word is `__<name>__` (`namespace` → `__namespace__`, which Gateway API's
// parentRefs rules use); otherwise `__` → `__underscores__`, `.` → `__dot__`, `-` → `__dash__`, `/` → `__slash__`.
// A name that is still not a CEL identifier after escaping is not accessible from CEL.

const RESERVED = new Set([
  'true',
  'false',
  'null',
  'in',
  'as',
  'break',
  'const',
  'continue',
  'else',
  'for',
  'function',
  'if',
  'import',
  'let',
  'loop',
  'package',
  'namespace',
  'return',
  'var',
  'void',
  'while',
]);

const IDENT = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** The CEL field name of a property, or undefined when CEL cannot address it. */
export function escapeProperty(name: string): string | undefined {
  if (RESERVED.has(name)) return `__${name}__`;
  const escaped = name
    .replaceAll('__', '__underscores__')
    .replaceAll('.', '__dot__')
    .replaceAll('-', '__dash__')
    .replaceAll('/', '__slash__');
  return IDENT.test(escaped) ? escaped : undefined;
}
