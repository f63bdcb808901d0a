// TrafficPolicy `buffer` and `compression` → their IR: the request size limit (Envoy's buffer max_request_bytes),
// and gzip of responses with Envoy's compressor defaults (min_content_length 30; an empty content-type list means
// Envoy's default list). Content types are checked as media types (`type/subtype`); a bad one is a Finding.
import type { BufferSpec, CompressionSpec } from '../model-policy-fields.ts';
import type { FieldReader } from './field-reader.ts';
import type { PolicySettings } from './types.ts';

/** Envoy's compressor default min_content_length. */
export const DEFAULT_MIN_CONTENT_LENGTH = 30;
const MEDIA_TYPE = /^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+$/i;

export function bufferSettings(b: BufferSpec, r: FieldReader): PolicySettings['buffer'] {
  if (!Number.isInteger(b.maxRequestBytes) || b.maxRequestBytes < 1) {
    r.problem('spec.buffer.maxRequestBytes', `must be a positive integer, not ${JSON.stringify(b.maxRequestBytes)}`);
    return undefined;
  }
  return { maxRequestBytes: b.maxRequestBytes };
}

export function compressionSettings(c: CompressionSpec, r: FieldReader): PolicySettings['compression'] {
  const contentTypes = c.contentTypes ?? [];
  let ok = true;
  contentTypes.forEach((t, i) => {
    if (!MEDIA_TYPE.test(t)) {
      r.problem(`spec.compression.contentTypes[${i}]`, `${JSON.stringify(t)} is not a media type (type/subtype)`);
      ok = false;
    }
  });
  if (!ok) return undefined;
  return { minContentLength: c.minContentLength ?? DEFAULT_MIN_CONTENT_LENGTH, contentTypes };
}
