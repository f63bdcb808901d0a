// The Kubernetes CEL environment on @bufbuild/cel: CEL's standard library plus what kube-apiserver 1.32 adds for
// CRD validation rules and admission policies (k8s.io/apiserver/pkg/cel/environment/base.go): cel-go's strings
// extension, optionals, and Kubernetes' lists, regex, URLs, IP/CIDR, quantity and format libraries, with RE2
// `matches` and equality that knows list types (equality.ts).
//
// ONE entry point, for every CEL user of the API server (CRD `x-kubernetes-validations` here; ValidatingAdmission-
// Policy evaluation is meant to call it too):
//
//   const env = kubernetesCelEnv({ self: CelScalar.DYN, oldSelf: CelScalar.DYN });
//   const run = plan(env, parse(rule));            // compile once (compile.ts adds kube's checks)
//   run({ self: toCel(schema, json), oldSelf })    // values.ts maps JSON to CEL by the OpenAPI schema
//
// `variables` declares the names a rule may use (CRDs: `self`, `oldSelf`; admission policies: `object`,
// `oldObject`, `request`, `params`, `namespaceObject`, `authorizer`, `variables`); all are `dyn`-typed values here.
import { type CelEnv, type CelFunc, type CelType, celEnv } from '@bufbuild/cel';
import { strings } from '@bufbuild/cel/ext';
import { equalityLibrary } from './equality.ts';
import { formatLibrary } from './lib-format.ts';
import { ipLibrary } from './lib-ip.ts';
import { listsLibrary, matchesRe2 } from './lib-lists.ts';
import { optionalLibrary } from './lib-optional.ts';
import { quantityLibrary } from './lib-quantity.ts';
import { urlLibrary } from './lib-urls.ts';

/** Every Kubernetes library function, in the order they are registered. */
export const kubernetesLibraries = [
  ...strings,
  ...equalityLibrary,
  ...optionalLibrary,
  ...listsLibrary,
  ...urlLibrary,
  ...ipLibrary,
  ...quantityLibrary,
  ...formatLibrary,
];

/**
 * The Kubernetes CEL environment with the given variables (name → CEL type; `CelScalar.DYN` for JSON values) and the
 * functions only one user declares (admission policies: the `authorizer` library and the global `matches`).
 */
export function kubernetesCelEnv<const V extends Record<string, CelType>>(
  variables: V,
  extraFuncs: readonly CelFunc[] = [],
): CelEnv<V> {
  return celEnv({ variables, funcs: [...kubernetesLibraries, ...extraFuncs], re2: matchesRe2 });
}
