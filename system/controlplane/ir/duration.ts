// Gateway API durations (GEP-2257: `1h`, `30s`, `500ms`, `1m30s`) → the canonical proto3 Duration string ("90s",
// "0.500s"), which is what Envoy's JSON and the golden files hold.
import { formatDuration } from '../../shared/envoy/protojson.ts';

const PART = /(\d{1,5})(h|ms|m|s)/y;
const MS: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1000, ms: 1 };

/** Milliseconds of a GEP-2257 duration, or undefined when it is not one. */
export function parseDurationMs(text: string): number | undefined {
  if (!text) return undefined;
  PART.lastIndex = 0;
  let total = 0;
  let parts = 0;
  while (PART.lastIndex < text.length) {
    const m = PART.exec(text);
    if (!m) return undefined;
    total += Number(m[1]) * MS[m[2]];
    parts++;
  }
  return parts >= 1 && parts <= 4 ? total : undefined;
}

export function msToProto(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  return formatDuration(BigInt(seconds), (ms - seconds * 1000) * 1_000_000);
}

/** A GEP-2257 duration as a proto Duration string; undefined when invalid. */
export function toProtoDuration(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  const ms = parseDurationMs(text);
  return ms === undefined ? undefined : msToProto(ms);
}
