// TrafficPolicy `transformation` → request/response header templates (set, add, remove), each value a template of
// Envoy's command operators (`%REQ(x-user)%`, `%DOWNSTREAM_REMOTE_ADDRESS%`, `%START_TIME%`...). A template is checked
// by the parser the proxy's formatter uses (system/shared/envoy/substitution-format.ts, the one list of the
// operators): an unknown operator is a Finding naming the field, not a NACK. `host` and pseudo headers cannot be
// changed (Envoy's header mutation rule).
import { FormatError, parseFormat } from '../../shared/envoy/substitution-format.ts';
import type { HeaderTemplatesSpec, TransformationSpec } from '../model-policy-fields.ts';
import type { FieldReader } from './field-reader.ts';
import { headerOps } from './http-settings.ts';
import type { HeaderOpsIR, PolicySettings } from './types.ts';

function templates(t: HeaderTemplatesSpec | undefined, field: string, r: FieldReader): HeaderOpsIR | undefined | false {
  let ok = true;
  const name = (n: string, at: string) => {
    if (n.startsWith(':') || n.toLowerCase() === 'host') {
      r.problem(at, `${JSON.stringify(n)} cannot be changed (pseudo headers and host are not modifiable)`);
      ok = false;
    }
  };
  for (const kind of ['set', 'add'] as const) {
    (t?.[kind] ?? []).forEach((h, i) => {
      name(h.name, `${field}.${kind}[${i}].name`);
      try {
        parseFormat(h.value);
      } catch (err) {
        if (!(err instanceof FormatError)) throw err;
        r.problem(`${field}.${kind}[${i}].value`, err.message);
        ok = false;
      }
    });
  }
  (t?.remove ?? []).forEach((n, i) => {
    name(n, `${field}.remove[${i}]`);
  });
  if (!ok) return false;
  const ops = headerOps(t);
  return ops && { ...ops, set: ops.set.map((h) => ({ ...h, name: h.name.toLowerCase() })) };
}

export function transformationSettings(t: TransformationSpec, r: FieldReader): PolicySettings['transformation'] {
  const request = templates(t.request, 'spec.transformation.request', r);
  const response = templates(t.response, 'spec.transformation.response', r);
  if (request === false || response === false) return undefined;
  return { ...(request ? { request } : {}), ...(response ? { response } : {}) };
}
