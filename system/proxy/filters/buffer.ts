// envoy.filters.http.buffer: the whole request is buffered before the rest of the chain runs (Envoy's buffer_filter.cc),
// up to max_request_bytes; over it, the request is answered 413 `Payload Too Large` with details
// `request_payload_too_large` (the filter manager's reply when a decoder buffer limit is exceeded) and counted in
// `http.<prefix>.downstream_rq_too_large`; the connection is closed after the reply (the rest of the body is not
// wanted). A route's BufferPerRoute replaces the limit (`buffer`) or turns the filter off (`disabled`). Like Envoy's,
// the buffered request carries a content-length.
import { ConfigError } from '../config/errors.ts';
import { DISABLED, isDisabled } from './disabled.ts';
import type { FilterFactory, J } from './filter-api.ts';

interface BufferConfig {
  maxBytes: number;
}

function compileBuffer(c: J | undefined, where: string): BufferConfig {
  const v = c?.max_request_bytes;
  const n = typeof v === 'object' && v !== null ? Number(v.value) : Number(v);
  if (v === undefined || !Number.isInteger(n) || n <= 0) {
    throw new ConfigError(`${where}.max_request_bytes: value is required and must be greater than 0`);
  }
  return { maxBytes: n };
}

export const bufferFactory: FilterFactory = {
  canonicalName: 'envoy.filters.http.buffer',
  configTypes: ['envoy.extensions.filters.http.buffer.v3.Buffer'],
  perRouteTypes: ['envoy.extensions.filters.http.buffer.v3.BufferPerRoute'],
  parsePerRoute: (c, where) => {
    if (c.disabled === true) return DISABLED;
    if (!c.buffer) throw new ConfigError(`${where}: one of disabled, buffer is required`);
    return compileBuffer(c.buffer, `${where}.buffer`);
  },
  create(name, config, ctx) {
    const base = compileBuffer(config, 'buffer');
    const tooLarge = ctx.stats.counter(`${ctx.statPrefix}downstream_rq_too_large`);
    return {
      name,
      async decodeHeaders(s) {
        const route = s.perFilterConfig<BufferConfig>(name);
        if (isDisabled(route)) return true;
        const cfg = route ?? base;
        let body: Buffer | undefined;
        try {
          body = await s.readBody(cfg.maxBytes);
        } catch {
          if (s.done) return false;
          tooLarge.inc();
          s.sendLocalReply(413, 'Payload Too Large', {
            details: 'request_payload_too_large',
            headers: { connection: 'close' },
            fromFilter: s.filterIndex,
          });
          return false;
        }
        if (s.done) return false;
        if (body !== undefined) {
          delete s.headers['transfer-encoding'];
          s.headers['content-length'] = String(body.length);
        }
        return true;
      },
    };
  },
};
