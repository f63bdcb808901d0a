// envoy.filters.http.compressor with the gzip library (envoy.compression.gzip.compressor), on node:zlib, deciding as
// Envoy's common/compressor/compressor.cc encodeHeaders does: a response with a body (not HEAD, 204, 304, an
// upgrade) is compressed when, in this order, its content-length is at least min_content_length (30; 0 means 30) or
// it has none (a streamed body), the client's Accept-Encoding picks gzip (chooseEncoding: the highest q-value among
// gzip, identity and `*`; q=0 excludes; no header: no_accept_header), its content type (before `;`) is in the list
// (Envoy's default list when empty; a response without one passes), no `cache-control: no-transform`, no etag when
// disable_on_etag_header, and no content-encoding. Then a strong etag is removed (a weak one kept), `vary:
// accept-encoding` added, content-length removed, content-encoding gzip. Stats
// `http.<prefix>.compressor.<library name>.gzip.*`: compressed, not_compressed, no_accept_header, header_identity,
// header_gzip, header_compressor_used, header_wildcard, header_not_valid, content_length_too_small,
// not_compressed_etag, total_uncompressed_bytes, total_compressed_bytes. Request compression
// (request_direction_config) and other libraries are NACKed.
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
    // Envoy's contentLengthUint: 0 (or unset) means the default, 30.
    minLength: Number(common.min_content_length ?? c.content_length ?? 0) || 30,
    types: new Set((types.length ? types : DEFAULT_CONTENT_TYPES).map((t) => t.toLowerCase())),
    disableOnEtag: r.disable_on_etag_header === true || c.disable_on_etag_header === true,
    removeAcceptEncoding: r.remove_accept_encoding_header === true || c.remove_accept_encoding_header === true,
  };
}

type Accept = 'header_identity' | 'header_gzip' | 'header_wildcard' | 'header_not_valid';

/** Envoy's chooseEncoding with gzip the only compressor: whether gzip is picked, and the header stat it counts. */
export function acceptsGzip(value: string): { ok: boolean; stat: Accept } {
  const pairs: [string, number][] = [];
  let gzipAllowed = true;
  for (const token of value.split(',')) {
    if (!token.trim()) continue;
    const [coding, ...params] = token.split(';');
    let q = 1;
    const param = params.join(';');
    const eq = param.indexOf('=');
    if (params.length && eq >= 0 && param.slice(0, eq).trim().toLowerCase() === 'q') {
      q = Number.parseFloat(param.slice(eq + 1).trim());
      if (Number.isNaN(q)) continue; // a q-value that does not parse: the token is skipped
    }
    const enc = coding!.trim().toLowerCase();
    pairs.push([enc, q]);
    if (!q && enc === 'gzip') gzipAllowed = false;
  }
  if (!pairs.length || !gzipAllowed) return { ok: false, stat: 'header_not_valid' };
  let choice: [string, number] = ['identity', 0];
  for (const p of pairs) {
    if (p[1] > choice[1] && (p[0] === 'gzip' || p[0] === 'identity' || p[0] === '*')) choice = p;
  }
  if (!choice[1]) return { ok: false, stat: 'header_not_valid' };
  if (choice[0] === 'identity') return { ok: false, stat: 'header_identity' };
  return { ok: true, stat: choice[0] === '*' ? 'header_wildcard' : 'header_gzip' };
}

const one = (v: HeaderMap[string]) => (Array.isArray(v) ? v.join(',') : v);

/** Envoy's insertVaryHeader: `Accept-Encoding` added to vary unless it is a token there already. */
function appendVary(headers: HeaderMap): void {
  const v = one(headers.vary);
  if (v === undefined) headers.vary = 'Accept-Encoding';
  else if (!v.split(',').some((x) => x.trim().toLowerCase() === 'accept-encoding'))
    headers.vary = `${v}, Accept-Encoding`;
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
    /** The request's Accept-Encoding (null: none), captured on the decode path as Envoy's filter does. */
    const acceptEncoding = new WeakMap<FilterStream, string | null>();
    const off = (s: FilterStream) => isDisabled(s.perFilterConfig(name));
    const acceptOk = (s: FilterStream) => {
      const v = acceptEncoding.get(s);
      if (v === null || v === undefined) {
        counter('no_accept_header').inc();
        return false;
      }
      const a = acceptsGzip(v);
      counter(a.stat).inc();
      if (a.stat === 'header_gzip') counter('header_compressor_used').inc();
      return a.ok;
    };
    const lengthOk = (headers: HeaderMap) => {
      const length = one(headers['content-length']);
      if (length === undefined) return true; // streamed (Envoy: chunked)
      const ok = /^\d+$/.test(length) && Number(length) >= cfg.minLength;
      if (!ok) counter('content_length_too_small').inc();
      return ok;
    };
    const typeOk = (headers: HeaderMap) => {
      const type = one(headers['content-type'])?.split(';')[0]?.trim().toLowerCase();
      return type === undefined || cfg.types.has(type);
    };
    const etagOk = (headers: HeaderMap) => {
      const ok = !(cfg.disableOnEtag && headers.etag !== undefined);
      if (!ok) counter('not_compressed_etag').inc();
      return ok;
    };
    return {
      name,
      decodeHeaders(s) {
        if (off(s)) return true;
        acceptEncoding.set(s, s.header('accept-encoding') ?? null);
        if (cfg.removeAcceptEncoding) delete s.headers['accept-encoding'];
        return true;
      },
      encodeHeaders(s, status, headers) {
        if (off(s) || !acceptEncoding.has(s)) return;
        const hasBody = !(s.method === 'HEAD' || status === 204 || status === 304 || status === 101 || s.upgrade);
        const compress =
          hasBody &&
          lengthOk(headers) &&
          acceptOk(s) &&
          typeOk(headers) &&
          !/(^|,)\s*no-transform\s*(,|$)/i.test(one(headers['cache-control']) ?? '') &&
          etagOk(headers) &&
          one(headers['content-encoding']) === undefined;
        if (!compress) {
          counter('not_compressed').inc();
          return;
        }
        counter('compressed').inc();
        const etag = one(headers.etag);
        if (etag !== undefined && etag.length > 2 && !/^[wW]\//.test(etag)) delete headers.etag;
        appendVary(headers);
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
