// Envoy's substitution format strings (source/common/formatter/substitution_format_string.cc and
// substitution_formatter.cc): `%COMMAND%`, `%COMMAND(arg)%` or `%COMMAND(arg):maxlen%` among literal text, `%%` a
// percent sign; json_format a JSON object whose string values are such formats. This is the one parser and the one
// list of supported operators: the proxy's formatter (system/proxy/config/formatter.ts) evaluates what it parses on a
// request, and the control plane checks access log formats (ListenerPolicy) and header templates (TrafficPolicy
// transformation) with it, so a format the control plane accepts is one the proxy runs, and an unknown operator is
// refused with the words of the proxy's NACK (Envoy's: "Not supported field in StreamInfo: X").

/** The command operators the proxy implements (Envoy's names); any other is refused. */
export const FORMAT_COMMANDS = [
  'REQ',
  'RESP',
  'TRAILER',
  'START_TIME',
  'PROTOCOL',
  'RESPONSE_CODE',
  'RESPONSE_CODE_DETAILS',
  'RESPONSE_FLAGS',
  'BYTES_RECEIVED',
  'BYTES_SENT',
  'DURATION',
  'REQUEST_DURATION',
  'RESPONSE_DURATION',
  'UPSTREAM_HOST',
  'UPSTREAM_REMOTE_ADDRESS',
  'UPSTREAM_CLUSTER',
  'UPSTREAM_TRANSPORT_FAILURE_REASON',
  'DOWNSTREAM_REMOTE_ADDRESS',
  'DOWNSTREAM_DIRECT_REMOTE_ADDRESS',
  'DOWNSTREAM_REMOTE_ADDRESS_WITHOUT_PORT',
  'DOWNSTREAM_DIRECT_REMOTE_ADDRESS_WITHOUT_PORT',
  'DOWNSTREAM_LOCAL_ADDRESS',
  'DOWNSTREAM_LOCAL_ADDRESS_WITHOUT_PORT',
  'DOWNSTREAM_LOCAL_PORT',
  'ROUTE_NAME',
  'VIRTUAL_CLUSTER_NAME',
  'HOSTNAME',
  'CONNECTION_ID',
  'STREAM_ID',
  'UPSTREAM_REQUEST_ATTEMPT_COUNT',
] as const;
export type FormatCommand = (typeof FORMAT_COMMANDS)[number];

const KNOWN: ReadonlySet<string> = new Set(FORMAT_COMMANDS);
/** Operators that name a header: without `(name)` Envoy refuses them. */
const NEEDS_ARGUMENT: ReadonlySet<string> = new Set(['REQ', 'RESP', 'TRAILER']);

/** A format that cannot be used: the message is Envoy's (what a NACK and a control plane finding carry). */
export class FormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FormatError';
  }
}

/** One `%COMMAND(arg):maxLength%` operator. */
export interface FormatOperator {
  command: FormatCommand;
  arg?: string;
  maxLength?: number;
}

/** A parsed format: literal text (adjacent literals joined) and operators, in order. */
export type FormatPiece = string | FormatOperator;

/** A parsed json_format: a format per string value, nested objects by field, any other value as it is. */
export type JsonFormatNode = { format: FormatPiece[] } | { fields: [string, JsonFormatNode][] } | { value: unknown };

function checkedCommand(command: string, arg: string | undefined): FormatCommand {
  if (!KNOWN.has(command)) throw new FormatError(`Not supported field in StreamInfo: ${command}`);
  if (NEEDS_ARGUMENT.has(command) && !arg) {
    throw new FormatError(`Invalid header configuration. Missing argument for ${command}`);
  }
  return command as FormatCommand;
}

/** Parses a format string; throws FormatError with Envoy's message at the first bad operator. */
export function parseFormat(format: string): FormatPiece[] {
  const pieces: FormatPiece[] = [];
  let lit = '';
  let i = 0;
  while (i < format.length) {
    const c = format[i]!;
    if (c !== '%') {
      lit += c;
      i++;
      continue;
    }
    if (format[i + 1] === '%') {
      lit += '%';
      i += 2;
      continue;
    }
    // %COMMAND%, %COMMAND(arg)% or %COMMAND(arg):N%; the argument may itself contain '%' (START_TIME formats).
    const head = /^[A-Z_0-9]+/.exec(format.slice(i + 1));
    const bad = () =>
      new FormatError(`Incorrect configuration: ${format}. Couldn't find valid command at position ${i}`);
    if (!head) throw bad();
    let j = i + 1 + head[0].length;
    let arg: string | undefined;
    if (format[j] === '(') {
      const close = format.indexOf(')', j);
      if (close < 0) throw bad();
      arg = format.slice(j + 1, close);
      j = close + 1;
    }
    let maxLength: number | undefined;
    const len = /^:(\d+)/.exec(format.slice(j));
    if (len) {
      maxLength = Number(len[1]);
      j += len[0].length;
    }
    if (format[j] !== '%') throw bad();
    if (lit) pieces.push(lit);
    lit = '';
    const command = checkedCommand(head[0], arg);
    pieces.push({
      command,
      ...(arg !== undefined ? { arg } : {}),
      ...(maxLength !== undefined ? { maxLength } : {}),
    });
    i = j + 1;
  }
  if (lit) pieces.push(lit);
  return pieces;
}

/** Parses a json_format: each string value (at any depth) is a format; throws FormatError at the first bad one. */
export function parseJsonFormat(shape: unknown): JsonFormatNode {
  if (typeof shape === 'string') return { format: parseFormat(shape) };
  if (shape && typeof shape === 'object' && !Array.isArray(shape)) {
    return { fields: Object.entries(shape).map(([k, v]) => [k, parseJsonFormat(v)]) };
  }
  return { value: shape };
}
