// What one downstream request went through, for access logs, header formatters and stats (Envoy's StreamInfo),
// and the header map type with its debug rendering.
import type { IncomingHttpHeaders } from 'node:http';

export type HeaderValue = string | string[] | undefined;
export type HeaderMap = Record<string, HeaderValue>;

/** Headers as Envoy's debug lines print them: `':status', '200'` then `'name', 'value'`, one a line. */
export function headerLines(status: number | undefined, h: HeaderMap, pseudo: Array<[string, string]> = []): string {
  const lines = pseudo.map(([k, v]) => `'${k}', '${v}'`);
  if (status !== undefined) lines.unshift(`':status', '${status}'`);
  for (const k in h) {
    const v = h[k];
    if (v === undefined) continue;
    for (const one of Array.isArray(v) ? v : [v]) lines.push(`'${k}', '${one}'`);
  }
  return lines.join('\n');
}

/** Envoy's response flags, in the order Envoy prints them (comma-separated). */
export const RESPONSE_FLAG_ORDER = [
  'UH',
  'UF',
  'UO',
  'NR',
  'URX',
  'NC',
  'DT',
  'UT',
  'LH',
  'LR',
  'UR',
  'UC',
  'DI',
  'FI',
  'RL',
  'UAEX',
  'RLSE',
  'DC',
  'IH',
  'SI',
  'DPE',
  'UPE',
  'UMSDR',
  'OM',
  'DF',
] as const;
export type ResponseFlag = (typeof RESPONSE_FLAG_ORDER)[number];

export class StreamInfo {
  /** Wall-clock start (ms since the epoch) and a monotonic start (ms) for durations. */
  readonly startTime = Date.now();
  readonly startMono = performance.now();
  requestHeaders: IncomingHttpHeaders;
  responseHeaders: HeaderMap | undefined;
  method = '';
  /** :path as received (with the query), or as taken from an absolute-form URI. */
  path = '';
  /** :scheme: http, or the scheme of an absolute-form URI. */
  scheme = 'http';
  protocol = 'HTTP/1.1';
  responseCode: number | undefined;
  responseCodeDetails = '';
  readonly flags = new Set<ResponseFlag>();
  bytesReceived = 0;
  bytesSent = 0;
  upstreamHost: string | undefined;
  upstreamCluster: string | undefined;
  upstreamTransportFailureReason: string | undefined;
  /** ms from the upstream request start to its response headers. */
  upstreamServiceTime: number | undefined;
  routeName: string | undefined;
  virtualHostName: string | undefined;
  /** The client address: the connection's peer, or the one x-forwarded-for gives (xff_num_trusted_hops). */
  downstreamRemote = '';
  /** The connection's peer (%DOWNSTREAM_DIRECT_REMOTE_ADDRESS%). */
  downstreamDirectRemote = '';
  downstreamLocal = '';
  connectionId = 0;
  streamId = '';
  /** ms (monotonic) when the last byte went to the client. */
  endMono: number | undefined;
  firstUpstreamRxMono: number | undefined;
  lastDownstreamRxMono: number | undefined;
  attemptCount = 0;
  /** Answered by the health_check filter (Envoy's StreamInfo::healthCheck, what not_health_check_filter reads). */
  healthCheck = false;
  /** preserve_case: request header names as received (lower case → as sent), for an HTTP/1 upstream. */
  requestHeaderCase: Map<string, string> | undefined;

  /** The request's authority: its Host header, HTTP/2's :authority, or an absolute-form URI's ('' for none). */
  authority = '';

  constructor(headers: IncomingHttpHeaders) {
    this.requestHeaders = headers;
    this.authority = headers.host ?? '';
  }

  /**
   * A request header as received (the codec's map, not copied per request); `host` is the request's authority
   * whichever way it came, as Envoy's request header map holds :authority.
   */
  requestHeader(name: string): string | string[] | undefined {
    if (name === 'host' || name === ':authority') return this.authority || undefined;
    return this.requestHeaders[name];
  }

  setFlag(flag: ResponseFlag): void {
    this.flags.add(flag);
  }

  flagsString(): string {
    if (this.flags.size === 0) return '-';
    return RESPONSE_FLAG_ORDER.filter((f) => this.flags.has(f)).join(',');
  }

  durationMs(): number | undefined {
    return this.endMono === undefined ? undefined : Math.round(this.endMono - this.startMono);
  }
}
