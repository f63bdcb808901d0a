// Envoy's substitution formatter: `%COMMAND(arg):maxlen%` operators, used by access logs and by header values
// (request_headers_to_add: "%DOWNSTREAM_REMOTE_ADDRESS%"), evaluated on a request's StreamInfo. The format is parsed
// and its operators checked by system/shared/envoy/substitution-format.ts (the parser the control plane checks
// formats with too); unknown operators are configuration errors (ConfigError, the parser's message), as in Envoy.
import { hostname } from 'node:os';
import {
  type FormatCommand,
  FormatError,
  type FormatPiece,
  type JsonFormatNode,
  parseFormat,
  parseJsonFormat,
} from '../../shared/envoy/substitution-format.ts';
import type { StreamInfo } from '../stream-info.ts';
import { ConfigError } from './errors.ts';

export type Formatter = (info: StreamInfo) => string;
type Piece = string | ((info: StreamInfo) => string | undefined);

export const DEFAULT_ACCESS_LOG_FORMAT =
  '[%START_TIME%] "%REQ(:METHOD)% %REQ(X-ENVOY-ORIGINAL-PATH?:PATH)% %PROTOCOL%" %RESPONSE_CODE% %RESPONSE_FLAGS% ' +
  '%BYTES_RECEIVED% %BYTES_SENT% %DURATION% %RESP(X-ENVOY-UPSTREAM-SERVICE-TIME)% "%REQ(X-FORWARDED-FOR)%" ' +
  '"%REQ(USER-AGENT)%" "%REQ(X-REQUEST-ID)%" "%REQ(:AUTHORITY)%" "%UPSTREAM_HOST%"\n';

const HOST = hostname();

function header(headers: Record<string, unknown> | undefined, name: string): string | undefined {
  return headers ? joined(headers[name]) : undefined;
}

function joined(v: unknown): string | undefined {
  if (v === undefined) return undefined;
  return Array.isArray(v) ? v.join(',') : String(v);
}

function requestHeader(info: StreamInfo, name: string): string | undefined {
  switch (name) {
    case ':method':
      return info.method || undefined;
    case ':path':
      return info.path || undefined;
    case ':scheme':
      return info.scheme;
    default:
      return joined(info.requestHeader(name));
  }
}

/** `%START_TIME%` default: 2024-01-02T03:04:05.678Z; with an argument, strftime flags Envoy supports. */
function startTime(arg: string | undefined): (info: StreamInfo) => string {
  if (!arg) return (info) => new Date(info.startTime).toISOString();
  return (info) => strftime(arg, new Date(info.startTime));
}

function strftime(fmt: string, d: Date): string {
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  return fmt.replace(/%(E?\d?[a-zA-Z%])/g, (_, f: string) => {
    switch (f) {
      case 'Y':
        return String(d.getUTCFullYear());
      case 'm':
        return p(d.getUTCMonth() + 1);
      case 'd':
        return p(d.getUTCDate());
      case 'H':
        return p(d.getUTCHours());
      case 'M':
        return p(d.getUTCMinutes());
      case 'S':
        return p(d.getUTCSeconds());
      case 'E3S':
        return `${p(d.getUTCSeconds())}.${p(d.getUTCMilliseconds(), 3)}`;
      case 's':
        return String(Math.floor(d.getTime() / 1000));
      case 'z':
        return '+0000';
      case 'T':
        return `${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())}`;
      case 'F':
        return `${d.getUTCFullYear()}-${p(d.getUTCMonth() + 1)}-${p(d.getUTCDate())}`;
      case '%':
        return '%';
      default:
        return `%${f}`;
    }
  });
}

/** An operator's evaluation; `cmd` is one the parser checked (a header operator has its argument). */
function operator(cmd: FormatCommand, arg: string | undefined): (info: StreamInfo) => string | undefined {
  switch (cmd) {
    case 'REQ':
    case 'RESP':
    case 'TRAILER': {
      const [main, alt] = (arg ?? '').toLowerCase().split('?');
      if (cmd === 'REQ') return (i) => requestHeader(i, main!) ?? (alt ? requestHeader(i, alt) : undefined);
      if (cmd === 'RESP') {
        return (i) => header(i.responseHeaders, main!) ?? (alt ? header(i.responseHeaders, alt) : undefined);
      }
      return () => undefined;
    }
    case 'START_TIME':
      return startTime(arg);
    case 'PROTOCOL':
      return (i) => i.protocol;
    case 'RESPONSE_CODE':
      return (i) => String(i.responseCode ?? 0);
    case 'RESPONSE_CODE_DETAILS':
      return (i) => i.responseCodeDetails || undefined;
    case 'RESPONSE_FLAGS':
      return (i) => i.flagsString();
    case 'BYTES_RECEIVED':
      return (i) => String(i.bytesReceived);
    case 'BYTES_SENT':
      return (i) => String(i.bytesSent);
    case 'DURATION':
      return (i) => (i.durationMs() === undefined ? undefined : String(i.durationMs()));
    case 'REQUEST_DURATION':
      return (i) =>
        i.lastDownstreamRxMono === undefined ? undefined : String(Math.round(i.lastDownstreamRxMono - i.startMono));
    case 'RESPONSE_DURATION':
      return (i) =>
        i.firstUpstreamRxMono === undefined ? undefined : String(Math.round(i.firstUpstreamRxMono - i.startMono));
    case 'UPSTREAM_HOST':
    case 'UPSTREAM_REMOTE_ADDRESS':
      return (i) => i.upstreamHost;
    case 'UPSTREAM_CLUSTER':
      return (i) => i.upstreamCluster;
    case 'UPSTREAM_TRANSPORT_FAILURE_REASON':
      return (i) => i.upstreamTransportFailureReason;
    case 'DOWNSTREAM_REMOTE_ADDRESS':
      return (i) => i.downstreamRemote || undefined;
    case 'DOWNSTREAM_DIRECT_REMOTE_ADDRESS':
      return (i) => i.downstreamDirectRemote || undefined;
    case 'DOWNSTREAM_REMOTE_ADDRESS_WITHOUT_PORT':
      return (i) => withoutPort(i.downstreamRemote);
    case 'DOWNSTREAM_DIRECT_REMOTE_ADDRESS_WITHOUT_PORT':
      return (i) => withoutPort(i.downstreamDirectRemote);
    case 'DOWNSTREAM_LOCAL_ADDRESS':
      return (i) => i.downstreamLocal || undefined;
    case 'DOWNSTREAM_LOCAL_ADDRESS_WITHOUT_PORT':
      return (i) => withoutPort(i.downstreamLocal);
    case 'DOWNSTREAM_LOCAL_PORT':
      return (i) => i.downstreamLocal.slice(i.downstreamLocal.lastIndexOf(':') + 1) || undefined;
    case 'ROUTE_NAME':
      return (i) => i.routeName || undefined;
    case 'VIRTUAL_CLUSTER_NAME':
      return () => undefined;
    case 'HOSTNAME':
      return () => HOST;
    case 'CONNECTION_ID':
      return (i) => String(i.connectionId);
    case 'STREAM_ID':
      return (i) => i.streamId || undefined;
    case 'UPSTREAM_REQUEST_ATTEMPT_COUNT':
      return (i) => String(i.attemptCount);
  }
}

function withoutPort(addr: string): string | undefined {
  if (!addr) return undefined;
  const i = addr.lastIndexOf(':');
  return i < 0 ? addr : addr.slice(0, i).replace(/^\[|\]$/g, '');
}

/** The parser's result, its FormatError a ConfigError as every config compiler of the proxy throws. */
function parsed<T>(parse: () => T): T {
  try {
    return parse();
  } catch (err) {
    if (err instanceof FormatError) throw new ConfigError(err.message);
    throw err;
  }
}

function compilePieces(parsedPieces: FormatPiece[], missing: string): Formatter {
  const pieces: Piece[] = parsedPieces.map((p) => {
    if (typeof p === 'string') return p;
    const fn = operator(p.command, p.arg);
    const max = p.maxLength;
    return max === undefined ? fn : (info: StreamInfo) => fn(info)?.slice(0, max);
  });
  if (pieces.length === 1 && typeof pieces[0] === 'string') {
    const only = pieces[0];
    return () => only;
  }
  return (info) => {
    let out = '';
    for (const p of pieces) {
      if (typeof p === 'string') out += p;
      else out += p(info) ?? missing;
    }
    return out;
  };
}

/**
 * Compiles a format string. `missing` is what a missing value prints: `-` in access logs (the default), nothing in
 * header values.
 */
export function compileFormat(format: string, opts: { missing?: string } = {}): Formatter {
  return compilePieces(
    parsed(() => parseFormat(format)),
    opts.missing ?? '-',
  );
}

/** True when the string has no `%` operator, so it can be used as is (the common case for header values). */
export function isLiteral(format: string): boolean {
  return !format.includes('%');
}

/** JSON access-log format (json_format): each string value is a format, other values stay as they are. */
export function compileJsonFormat(shape: Record<string, unknown>): Formatter {
  const compileNode = (node: JsonFormatNode): ((info: StreamInfo) => unknown) => {
    if ('format' in node) {
      const f = compilePieces(node.format, '\u0000');
      return (info) => {
        const s = f(info);
        return s === '\u0000' ? null : s.replace(/\u0000/g, '-');
      };
    }
    if ('fields' in node) {
      const inner = node.fields.map(([k, x]) => [k, compileNode(x)] as const);
      return (info) => Object.fromEntries(inner.map(([k, f]) => [k, f(info)]));
    }
    const v = node.value;
    return () => v;
  };
  const top = compileNode(parsed(() => parseJsonFormat(shape)));
  return (info) => JSON.stringify(top(info)) + '\n';
}
