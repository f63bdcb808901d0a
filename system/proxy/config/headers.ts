// Header mutations of routes, virtual hosts and route configurations (request/response_headers_to_add and
// *_to_remove), with Envoy's append actions and formatter values.

import type { HeaderMap, StreamInfo } from '../stream-info.ts';
import { ConfigError } from './errors.ts';
import { compileFormat, type Formatter, isLiteral } from './formatter.ts';

type J = Record<string, any>;

type Action = 'APPEND_IF_EXISTS_OR_ADD' | 'ADD_IF_ABSENT' | 'OVERWRITE_IF_EXISTS_OR_ADD' | 'OVERWRITE_IF_EXISTS';

interface AddOp {
  key: string;
  value: Formatter;
  action: Action;
  keepEmpty: boolean;
}

export interface HeaderMutation {
  add: AddOp[];
  remove: string[];
}

export const EMPTY_MUTATION: HeaderMutation = { add: [], remove: [] };

/** Headers a route may not touch (Envoy: "':-prefixed' or host headers may not be modified"). */
function checkModifiable(key: string, where: string): void {
  if (key.startsWith(':') || key === 'host') {
    throw new ConfigError(`${where}: ':-prefixed' or host headers may not be modified`);
  }
}

/**
 * The request and response header mutations a RouteConfiguration, a virtual host, a route or a weighted cluster
 * carries (`request_headers_to_add`/`_remove`, `response_headers_to_add`/`_remove`); `where` is that object's path.
 */
export function compileHeaderMutations(o: J, where: string): { request: HeaderMutation; response: HeaderMutation } {
  const at = (field: string) => (where ? `${where}.${field}` : field);
  return {
    request: compileHeaderMutation(o.request_headers_to_add, o.request_headers_to_remove, at('request_headers_to_add')),
    response: compileHeaderMutation(
      o.response_headers_to_add,
      o.response_headers_to_remove,
      at('response_headers_to_add'),
    ),
  };
}

export function compileHeaderMutation(
  toAdd: J[] | undefined,
  toRemove: string[] | undefined,
  where: string,
): HeaderMutation {
  const add: AddOp[] = [];
  (toAdd ?? []).forEach((opt, i) => {
    const here = `${where}[${i}]`;
    const key = String(opt.header?.key ?? '').toLowerCase();
    if (!key) throw new ConfigError(`${here}.header.key: value length must be at least 1 characters`);
    checkModifiable(key, here);
    const raw =
      opt.header?.value ?? (opt.header?.raw_value ? Buffer.from(opt.header.raw_value, 'base64').toString() : '');
    let action: Action = (opt.append_action as Action | undefined) ?? 'APPEND_IF_EXISTS_OR_ADD';
    if (opt.append !== undefined) {
      if (opt.append_action !== undefined && opt.append_action !== 'APPEND_IF_EXISTS_OR_ADD') {
        throw new ConfigError(`${here}: Both append and append_action are set and it's not allowed`);
      }
      action = opt.append ? 'APPEND_IF_EXISTS_OR_ADD' : 'OVERWRITE_IF_EXISTS_OR_ADD';
    }
    const value = isLiteral(raw) ? () => raw : compileFormat(raw, { missing: '' });
    add.push({ key, value, action, keepEmpty: opt.keep_empty_value === true });
  });
  const remove = (toRemove ?? []).map((h) => {
    const k = h.toLowerCase();
    checkModifiable(k, `${where}: request_headers_to_remove`);
    return k;
  });
  return { add, remove };
}

/** Applies mutations in order (each one sees the result of the previous); removals come first, as in Envoy. */
export function applyMutations(headers: HeaderMap, mutations: HeaderMutation[], info: StreamInfo): void {
  for (const m of mutations) {
    for (const k of m.remove) delete headers[k];
    for (const op of m.add) {
      const v = op.value(info);
      if (v === '' && !op.keepEmpty) continue;
      const existing = headers[op.key];
      switch (op.action) {
        case 'APPEND_IF_EXISTS_OR_ADD':
          if (existing === undefined) headers[op.key] = v;
          else headers[op.key] = Array.isArray(existing) ? [...existing, v] : [existing, v];
          break;
        case 'ADD_IF_ABSENT':
          if (existing === undefined) headers[op.key] = v;
          break;
        case 'OVERWRITE_IF_EXISTS_OR_ADD':
          headers[op.key] = v;
          break;
        case 'OVERWRITE_IF_EXISTS':
          if (existing !== undefined) headers[op.key] = v;
          break;
      }
    }
  }
}
