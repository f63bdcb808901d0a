// Access loggers of an HCM (access_log[]): stdout, stderr and file loggers with Envoy's default text format, a
// custom text format or a JSON format, each behind its optional filter (access-log-filter.ts). The process's stdout
// and stderr and every file are written through a BufferedLogWriter (access-log-buffer.ts), off the request path.
import { createWriteStream, type WriteStream } from 'node:fs';
import { ConfigError } from '../config/errors.ts';
import { compileFormat, compileJsonFormat, DEFAULT_ACCESS_LOG_FORMAT, type Formatter } from '../config/formatter.ts';
import type { StreamInfo } from '../stream-info.ts';
import { BufferedLogWriter } from './access-log-buffer.ts';
import { compileAccessLogFilter } from './access-log-filter.ts';

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

const stdoutBuffer = new BufferedLogWriter((s) => process.stdout.write(s));
const stderrBuffer = new BufferedLogWriter((s) => process.stderr.write(s));
let exitHook = false;
function buffered(b: BufferedLogWriter): AccessLogWriter {
  if (!exitHook) {
    exitHook = true;
    process.once('exit', () => {
      stdoutBuffer.flush();
      stderrBuffer.flush();
      for (const f of openFiles.values()) f.buffer.flush();
    });
  }
  return (l) => b.write(l);
}

/** The process's own streams, buffered (flushed every second, at 64 KiB, and at exit). */
export const PROCESS_SINKS: AccessLogSinks = {
  stdout: buffered(stdoutBuffer),
  stderr: buffered(stderrBuffer),
};

const openFiles = new Map<string, { stream: WriteStream; buffer: BufferedLogWriter; refs: number }>();

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
  const logger = compileLogger(entry, where, sinks);
  if (entry.filter === undefined) return logger;
  const filter = compileAccessLogFilter(entry.filter, `${where}.filter`);
  return {
    log: (i) => {
      if (filter(i)) logger.log(i);
    },
    close: () => logger.close(),
  };
}

function compileLogger(entry: J, where: string, sinks: AccessLogSinks): AccessLogger {
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
        const stream = createWriteStream(path, { flags: 'a' });
        file = { stream, buffer: new BufferedLogWriter((s) => stream.write(s)), refs: 0 };
        openFiles.set(path, file);
      }
      file.refs++;
      const held = file;
      return {
        log: (i) => held.buffer.write(f(i)),
        close: () => {
          held.buffer.flush();
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
