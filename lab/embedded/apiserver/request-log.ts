// The request log (`labPaths().auditLog`): one JSON line per request, in the fields of Kubernetes' audit events that
// matter here (user, verb, apiGroup, resource, subresource, namespace, name, code, stage, duration, URI, dryRun,
// user agent). Lines are buffered during an event-loop turn and written in one write before that turn's responses go
// out (server.ts), so a client that has its answer finds its line. Long-running requests log twice, stage
// `ResponseStarted` and `ResponseComplete`. Past 64 MiB the log moves to `<file>.1` and starts afresh.
import { closeSync, fstatSync, mkdirSync, openSync, renameSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Logger } from '../../../system/shared/log.ts';

export interface AuditRecord {
  user?: string;
  verb?: string;
  group?: string;
  resource?: string;
  subresource?: string;
  namespace?: string;
  name?: string;
  code?: number;
  dryRun?: boolean;
  /** Long-running requests (watches, streams) log twice: when the response starts and when it completes. */
  stage?: 'ResponseStarted' | 'ResponseComplete';
}

const AUDIT_MAX_BYTES = 64 * 1024 * 1024;

export class RequestLog {
  private readonly file?: string;
  private fd?: number;
  private writes = 0;
  private buf: string[] = [];

  constructor(file: string | undefined) {
    this.file = file;
    if (file) {
      mkdirSync(dirname(file), { recursive: true });
      this.fd = openSync(file, 'a');
    }
  }

  /** Buffers a request's line; false when there is no log (nothing to write at the end of the turn). */
  record(rec: AuditRecord, started: number, method: string, uri: string, ua: string | undefined): boolean {
    if (this.fd === undefined) return false;
    const line = {
      ts: new Date().toISOString(),
      user: rec.user ?? '',
      verb: rec.verb ?? method.toLowerCase(),
      apiGroup: rec.group ?? '',
      resource: rec.resource ?? '',
      ...(rec.subresource ? { subresource: rec.subresource } : {}),
      namespace: rec.namespace ?? '',
      name: rec.name ?? '',
      code: rec.code ?? 0,
      stage: rec.stage ?? 'ResponseComplete',
      durationMs: Math.round((performance.now() - started) * 100) / 100,
      method,
      uri,
      ...(rec.dryRun ? { dryRun: true } : {}),
      ...(ua ? { userAgent: ua } : {}),
    };
    this.buf.push(`${JSON.stringify(line)}\n`);
    return true;
  }

  /** Writes the buffered lines in one write (a failure is logged, never thrown: the responses still go out). */
  write(log: Logger): void {
    if (this.buf.length && this.fd !== undefined) {
      try {
        this.rotate();
        writeSync(this.fd, this.buf.join(''));
      } catch (e) {
        log.error('request log write failed', { err: e as Error });
      }
    }
    this.buf = [];
  }

  /** Past AUDIT_MAX_BYTES the request log moves to `<file>.1` (replacing the previous one) and starts afresh. */
  private rotate(): void {
    if (++this.writes % 1000 !== 0 || this.fd === undefined || !this.file) return;
    if (fstatSync(this.fd).size < AUDIT_MAX_BYTES) return;
    closeSync(this.fd);
    renameSync(this.file, `${this.file}.1`);
    this.fd = openSync(this.file, 'a');
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}
