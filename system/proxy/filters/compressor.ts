// envoy.filters.http.compressor with the gzip library (envoy.compression.gzip.compressor), on node:zlib: a response
// is gzip-compressed when the client accepts gzip (Accept-Encoding with q-values; `*` counts), it has a body (not
// HEAD, 204, 304, an upgrade), no content-encoding, no `cache-control: no-transform`, a content-length of at least
// min_content_length (30) or none, and a content type in the list (Envoy's default list when empty). Then
// content-length goes, content-encoding is gzip, a strong etag is weakened (or, with disable_on_etag_header, the
// response is left alone) and `vary: accept-encoding` is added — also to a compressible response the client did not
// accept, as Envoy does (compressor_filter.cc). Stats `http.<prefix>.compressor.<library name>.gzip.*`: compressed,
// not_compressed, no_accept_header, header_identity, header_gzip, header_wildcard, header_not_valid,
// content_length_too_small, not_compressed_etag, total_uncompressed_bytes, total_compressed_bytes. Request
// compression (request_direction_config) and other libraries are NACKed.
import { constants, createGzip } from 'node:zlib';
import { ConfigError } from '../config/errors.ts';
import type { HeaderMap } from '../stream-info.ts';
import { DISABLED, isDisabled } from './disabled.ts';
import type { FilterFactory, FilterStream, J } from './filter-api.ts';

const GZIP = 'envoy.extensions.compression.gzip.compressor.v3.Gzip';

/** Envoy's default content types (compressor_filter.cc defaultContentEncoding list). */
export const DEFAULT_CONTENT_TYPES = [
  'text/html',
  'text/plain',
  'text/css',
  'application/javascript',
  'application/x-javascript',
  'text/javascript',
  'text/x-javascript',
  'text/ecmascript',
  'text/js',
  'text/jscript',
  'text/x-js',
  'application/ecmascript',
  'application/x-json',
  'application/xml',
  'application/json',
  'image/svg+xml',
  'text/xml',
  'application/xhtml+xml',
];

const LEVELS: Record<string, number> = {
  DEFAULT_COMPRESSION: constants.Z_DEFAULT_COMPRESSION,
  BEST_SPEED: constants.Z_BEST_SPEED,
  COMPRESSION_LEVEL_1: 1,
  COMPRESSION_LEVEL_2: 2,
  COMPRESSION_LEVEL_3: 3,
  COMPRESSION_LEVEL_4: 4,
  COMPRESSION_LEVEL_5: 5,
  COMPRESSION_LEVEL_6: 6,
  COMPRESSION_LEVEL_7: 7,
  COMPRESSION_LEVEL_8: 8,
  COMPRESSION_LEVEL_9: 9,
  BEST_COMPRESSION: constants.Z_BEST_COMPRESSION,
};

interface CompressorConfig {
  libraryName: string;
  level: number;
  memLevel: number;
  windowBits: number;
  minLength: number;
  types: Set<string>;
  disableOnEtag: boolean;
  removeAcceptEncoding: boolean;
}

function compile(c: J): CompressorConfig {
  const lib = c.compressor_library as J | undefined;
  const type = String(lib?.typed_config?.['@type'] ?? '');
  if (type.slice(type.lastIndexOf('/') + 1) !== GZIP) {
    throw new ConfigError(`compressor.compressor_library: ${type || '(none)'} is not supported (use ${GZIP})`);
  }
  if (c.request_direction_config) throw new ConfigError('compressor.request_direction_config: not supported');
  const g = lib!.typed_config as J;
  const r = (c.response_direction_config ?? {}) as J;
  const common = (r.common_config ?? {}) as J;
  const types = (common.content_type ?? c.content_type ?? []) as string[];
  return {
    libraryName: String(lib!.name ?? ''),
    level: LEVELS[g.compression_level ?? 'DEFAULT_COMPRESSION'] ?? constants.Z_DEFAULT_COMPRESSION,
    memLevel: g.memory_level ?? 5,
    windowBits: g.window_bits ?? 12,
    minLength: Number(common.min_content_length ?? c.content_length ?? 30),
    types: new Set((types.length ? types : DEFAULT_CONTENT_TYPES).map((t) => t.toLowerCase())),
    disableOnEtag: r.disable_on_etag_header === true || c.disable_on_etag_header === true,
    removeAcceptEncoding: r.remove_accept_encoding_header === true || c.remove_accept_encoding_header === true,
  };
}

type Accept = 'no_accept_header' | 'header_identity' | 'header_gzip' | 'header_wildcard' | 'header_not_valid';

/** Whether Accept-Encoding allows gzip (RFC 9110 §12.5.3 q-values), and the stat Envoy counts for it. */
export function acceptsGzip(value: string | undefined): { ok: boolean; stat: Accept } {
  if (value === undefined) return { ok: false, stat: 'no_accept_header' };
  let gzip: number | undefined;
  let star: number | undefined;
  let identity = false;
  for (const part of value.split(',')) {
    const [coding, ...params] = part.trim().toLowerCase().split(';');
    const qp = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const q = qp === undefined ? 1 : Number(qp.slice(2));
    if (coding === 'gzip') gzip = q;
    else if (coding === '*') star = q;
    else if (coding === 'identity') identity = true;
  }
  if (gzip !== undefined) return { ok: gzip > 0, stat: gzip > 0 ? 'header_gzip' : 'header_not_valid' };
  if (star !== undefined) return { ok: star > 0, stat: star > 0 ? 'header_wildcard' : 'header_not_valid' };
  return { ok: false, stat: identity ? 'header_identity' : 'header_not_valid' };
}

const one = (v: HeaderMap[string]) => (Array.isArray(v) ? v.join(',') : v);

function appendVary(headers: HeaderMap): void {
  const v = one(headers.vary);
  if (v === undefined || v === '') headers.vary = 'accept-encoding';
  else if (
    !v
      .toLowerCase()
      .split(',')
      .some((x) => x.trim() === 'accept-encoding' || x.trim() === '*')
  )
    headers.vary = `${v}, accept-encoding`;
}

export const compressorFactory: FilterFactory = {
  canonicalName: 'envoy.filters.http.compressor',
  configTypes: ['envoy.extensions.filters.http.compressor.v3.Compressor'],
  perRouteTypes: ['envoy.extensions.filters.http.compressor.v3.CompressorPerRoute'],
  parsePerRoute: (c) => (c.disabled === true ? DISABLED : { overrides: c.overrides ?? {} }),
  create(name, config, ctx) {
    const cfg = compile(config);
    const p = `${ctx.statPrefix}compressor.${cfg.libraryName}.gzip.`;
    const counter = (n: string) => ctx.stats.counter(p + n);
    const accepted = new WeakMap<FilterStream, boolean>();
    const off = (s: FilterStream) => isDisabled(s.perFilterConfig(name));
    return {
      name,
      decodeHeaders(s) {
        if (off(s)) return true;
        const a = acceptsGzip(s.header('accept-encoding'));
        counter(a.stat).inc();
        accepted.set(s, a.ok);
        if (cfg.removeAcceptEncoding) delete s.headers['accept-encoding'];
        return true;
      },
      encodeHeaders(s, status, headers) {
        if (off(s) || !accepted.has(s)) return;
        if (s.method === 'HEAD' || status === 204 || status === 304 || status === 101 || s.upgrade) return;
        const length = one(headers['content-length']);
        if (length !== undefined && Number(length) < cfg.minLength) {
          counter('content_length_too_small').inc();
          counter('not_compressed').inc();
          return;
        }
        const type = one(headers['content-type'])?.split(';')[0]?.trim().toLowerCase();
        const compressible =
          type !== undefined &&
          cfg.types.has(type) &&
          one(headers['content-encoding']) === undefined &&
          !/(^|,)\s*no-transform\s*(,|$)/i.test(one(headers['cache-control']) ?? '');
        const etag = one(headers.etag);
        if (compressible && etag !== undefined && cfg.disableOnEtag) {
          counter('not_compressed_etag').inc();
          counter('not_compressed').inc();
          return;
        }
        if (!compressible) {
          counter('not_compressed').inc();
          return;
        }
        appendVary(headers);
        if (!accepted.get(s)) {
          counter('not_compressed').inc();
          return;
        }
        counter('compressed').inc();
        if (etag !== undefined && !etag.startsWith('W/')) headers.etag = `W/${etag}`;
        delete headers['content-length'];
        headers['content-encoding'] = 'gzip';
        const gz = createGzip({ level: cfg.level, memLevel: cfg.memLevel, windowBits: Math.max(9, cfg.windowBits) });
        const inBytes = counter('total_uncompressed_bytes');
        const outBytes = counter('total_compressed_bytes');
        gz.on('data', (c: Buffer) => outBytes.inc(c.length));
        gz.once('end', () => inBytes.inc(gz.bytesWritten));
        s.encodeBodyThrough(gz);
      },
    };
  },
};
