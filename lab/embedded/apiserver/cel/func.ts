// Kubernetes CEL functions on @bufbuild/cel: a function whose overload applies only to some argument values.
// @bufbuild/cel's celFunc/celMethod match arguments by declared type and cannot decline a `dyn` argument, so the
// Kubernetes libraries (whose values are opaque: IP, CIDR, URL, Quantity, Format, optional) build their functions
// here: `impl` returns `undefined` when the overload does not apply, and the next overload of the name is tried, as
// cel-go dispatches overloads. `OpaqueValue` is the base of those values: @bufbuild/cel passes through only its own
// value kinds, so an opaque value presents itself as an (empty) CEL map; equality.ts compares them properly.
import { type CelFunc, CelScalar, type CelType, type CelValue, celError, isCelError } from '@bufbuild/cel';

const FUNC = Symbol.for('@bufbuild/cel/func');
const MAP = Symbol.for('@bufbuild/cel/map');

type Impl = (target: CelValue | undefined, args: CelValue[]) => CelValue | undefined;

function make(name: string, method: boolean, arity: number, impl: Impl, replaces?: string): CelFunc {
  // An id equal to a standard overload's replaces it (@bufbuild/cel's resolver keeps the last of one id).
  const id = replaces ?? `k8s.${method ? 'dyn.' : ''}${name}(${arity})`;
  return {
    [FUNC]: {},
    id,
    name,
    target: method ? CelScalar.DYN : undefined,
    arguments: Array.from({ length: arity }, () => CelScalar.DYN as CelType),
    result: CelScalar.DYN,
    call(exprId: number, target: CelValue | undefined, args: CelValue[]) {
      if (args.length !== arity || (method ? target === undefined : target !== undefined)) return undefined;
      try {
        const r = impl(target, args);
        return r;
      } catch (e) {
        return isCelError(e) ? e : celError(e instanceof Error ? e.message : String(e), exprId);
      }
    },
  } as unknown as CelFunc;
}

/** A global function `name(args...)`; `impl` returns undefined when these arguments are not its overload. */
export function fn(
  name: string,
  arity: number,
  impl: (args: CelValue[]) => CelValue | undefined,
  replaces?: string,
): CelFunc {
  return make(name, false, arity, (_t, a) => impl(a), replaces);
}

/** A method `target.name(args...)`; `impl` returns undefined when the target or arguments are not its overload. */
export function method(
  name: string,
  arity: number,
  impl: (target: CelValue, args: CelValue[]) => CelValue | undefined,
): CelFunc {
  return make(name, true, arity, (t, a) => impl(t as CelValue, a));
}

/** Base of the Kubernetes library values (IP, CIDR, URL, Quantity, Format, optional). */
export abstract class OpaqueValue {
  readonly [MAP] = {};
  abstract readonly celTypeName: string;
  readonly size = 0;
  get(): undefined {
    return undefined;
  }
  has(): boolean {
    return false;
  }
  *keys(): IterableIterator<never> {}
  *values(): IterableIterator<never> {}
  *entries(): IterableIterator<never> {}
  [Symbol.iterator](): IterableIterator<never> {
    return this.entries();
  }
  forEach(): void {}
  /** Equality with another value of the same kind (cel-go's Equal). */
  abstract equals(other: OpaqueValue): boolean;
}

/** A CEL runtime error with cel-go's message. */
export function fail(message: string): never {
  throw new Error(message);
}
