// Access loggers of an HCM (access_log[]): stdout, stderr and file loggers with Envoy's default text format, a
// custom text format or a JSON format.
import { createWriteStream, type WriteStream } from 'node:fs';
import { ConfigError } from '../config/errors.ts';
import { compileFormat, compileJsonFormat, DEFAULT_ACCESS_LOG_FORMAT, type Formatter } from '../config/formatter.ts';
import type { StreamInfo } from '../stream-info.ts';

type J = Record<string, any>;

export interface AccessLogger {
  log(info: StreamInfo): void;
  close(): void;
}

export type AccessLogWriter = (line: string) => void;

/** Tests and the bench replace the process streams; the default writes to the real ones. */
export interface AccessLogSinks {
  stdout: AccessLogWriter;
  stderr: AccessLogWriter;
}

export const PROCESS_SINKS: AccessLogSinks = {
  stdout: (l) => process.stdout.write(l),
  stderr: (l) => process.stderr.write(l),
};

const openFiles = new Map<string, { stream: WriteStream; refs: number }>();

function formatterOf(cfg: J, where: string): Formatter {
  const lf = cfg.log_format as J | undefined;
  if (cfg.format !== undefined) return compileFormat(String(cfg.format));
  if (!lf) return compileFormat(DEFAULT_ACCESS_LOG_FORMAT);
  if (lf.text_format !== undefined) return compileFormat(String(lf.text_format));
  if (lf.text_format_source?.inline_string !== undefined)
    return compileFormat(String(lf.text_format_source.inline_string));
  if (lf.json_format !== undefined) return compileJsonFormat(lf.json_format);
  if (lf.text_format_source)
    throw new ConfigError(`${where}.log_format.text_format_source: only inline_string is supported`);
  return compileFormat(DEFAULT_ACCESS_LOG_FORMAT);
}

export function compileAccessLog(entry: J, where: string, sinks: AccessLogSinks): AccessLogger {
  if (entry.filter !== undefined) throw new ConfigError(`${where}.filter: access log filters are not supported`);
  const cfg = entry.typed_config as J | undefined;
  const type = String(cfg?.['@type'] ?? '');
  const name = type.slice(type.lastIndexOf('/') + 1);
  switch (name) {
    case 'envoy.extensions.access_loggers.stream.v3.StdoutAccessLog': {
      const f = formatterOf(cfg!, where);
      return { log: (i) => sinks.stdout(f(i)), close: () => {} };
    }
    case 'envoy.extensions.access_loggers.stream.v3.StderrAccessLog': {
      const f = formatterOf(cfg!, where);
      return { log: (i) => sinks.stderr(f(i)), close: () => {} };
    }
    case 'envoy.extensions.access_loggers.file.v3.FileAccessLog': {
      const f = formatterOf(cfg!, where);
      const path = String(cfg!.path ?? '');
      if (!path) throw new ConfigError(`${where}.typed_config.path: value length must be at least 1 characters`);
      if (path === '/dev/stdout') return { log: (i) => sinks.stdout(f(i)), close: () => {} };
      if (path === '/dev/stderr') return { log: (i) => sinks.stderr(f(i)), close: () => {} };
      let file = openFiles.get(path);
      if (!file) {
        file = { stream: createWriteStream(path, { flags: 'a' }), refs: 0 };
        openFiles.set(path, file);
      }
      file.refs++;
      const held = file;
      return {
        log: (i) => held.stream.write(f(i)),
        close: () => {
          if (--held.refs === 0) {
            held.stream.end();
            openFiles.delete(path);
          }
        },
      };
    }
    default:
      throw new ConfigError(
        `Didn't find a registered implementation for '${entry.name ?? ''}' with type URL: '${name || '<none>'}'`,
      );
  }
}
