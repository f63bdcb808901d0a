// What the two sample services (sampleapp/, extauth/) share, as HTTP servers and as pods' processes: listening with
// the keep-alive a proxy's upstream pool needs, the URL to reach them, a close that ends every connection; on the
// command line a checked --port, and SIGTERM (the kubelet) or SIGINT (a terminal) closing the server, then exit 0.
import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { parseArgs } from 'node:util';
import { listenOn } from './listen.ts';

export interface ListeningService {
  host: string;
  port: number;
  /** `http(s)://<host>:<port>` (127.0.0.1 when listening on all interfaces). */
  url: string;
  close(): Promise<void>;
}

export interface ListenOptions {
  /** Default 127.0.0.1 (a test helper); the command lines listen on 0.0.0.0. */
  host?: string;
  /** Default 0 (any free port). */
  port?: number;
  /** Runs once the server has closed, before close() resolves (a log writer flushes there). */
  onClosed?: () => void;
  /** Serve HTTPS (HTTP/1.1 over TLS) with this certificate and key (PEM) instead of plain HTTP. */
  tls?: { cert: string; key: string };
}

/** An HTTP server of `handler` listening on host:port; a failure to listen names the service, the address and why. */
export async function listenHttp(
  service: string,
  handler: http.RequestListener,
  opts: ListenOptions = {},
): Promise<ListeningService> {
  const host = opts.host ?? '127.0.0.1';
  const server = opts.tls
    ? https.createServer({ cert: opts.tls.cert, key: opts.tls.key, ALPNProtocols: ['http/1.1'] }, handler)
    : http.createServer(handler);
  // Proxies keep pooled upstream connections for long; a short server idle timeout races with their reuse and shows
  // up as spurious 503s, so idle keep-alive connections live for 65 s (longer than common proxy idle timeouts' floor).
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;

  const port = await listenOn(server, host, opts.port ?? 0).catch((err: NodeJS.ErrnoException) => {
    throw new Error(`${service}: cannot listen on ${host}:${opts.port ?? 0}: ${err.code ?? err.message}`);
  });
  const urlHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  return {
    host,
    port,
    url: `${opts.tls ? 'https' : 'http'}://${urlHost}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => {
          opts.onClosed?.();
          resolve();
        });
        server.closeAllConnections();
      }),
  };
}

export interface ServiceArgs {
  host: string;
  port: number;
  /** The boolean flags given (of those the service named). */
  flags: Set<string>;
  /** The extra port options given (of those the service named), checked as --port is. */
  ports: Record<string, number>;
  /** The string options (of those the service named) with their value or default. */
  strings: Record<string, string>;
}

/**
 * A sample service's command line: `--port` (default `defaultPort`), `--host` (default 0.0.0.0), the boolean `flags`
 * it names, `-h`/`--help` (prints `usage` and returns undefined); anything else is an error.
 */
export function serviceArgs(
  args: string[],
  usage: string,
  defaultPort: number,
  flags: readonly string[] = [],
  portOptions: readonly string[] = [],
  stringOptions: Readonly<Record<string, string>> = {},
): ServiceArgs | undefined {
  const { values } = parseArgs({
    args,
    options: {
      port: { type: 'string', default: String(defaultPort) },
      host: { type: 'string', default: '0.0.0.0' },
      ...Object.fromEntries(flags.map((f) => [f, { type: 'boolean', default: false }])),
      ...Object.fromEntries(portOptions.map((f) => [f, { type: 'string' }])),
      ...Object.fromEntries(Object.entries(stringOptions).map(([f, d]) => [f, { type: 'string', default: d }])),
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
    allowPositionals: false,
  }) as { values: Record<string, string | boolean> };
  if (values.help) {
    process.stdout.write(usage + '\n');
    return undefined;
  }
  return {
    host: values.host as string,
    port: parsePort(values.port as string),
    flags: new Set(flags.filter((f) => values[f] === true)),
    ports: Object.fromEntries(
      portOptions.filter((f) => values[f] !== undefined).map((f) => [f, parsePort(values[f] as string, `--${f}`)]),
    ),
    strings: Object.fromEntries(Object.keys(stringOptions).map((f) => [f, values[f] as string])),
  };
}

/** A --port value: a decimal port number from 0 to 65535. */
function parsePort(text: string, flag = '--port'): number {
  if (!/^\d{1,5}$/.test(text) || Number(text) > 65535) {
    throw new Error(`${flag}: expected a port number from 0 to 65535, got ${JSON.stringify(text)}`);
  }
  return Number(text);
}

/** SIGTERM (kubelet) and SIGINT (a terminal) close the service and its connections, then exit 0 (1 if closing failed). */
export function stopOnSignals(close: () => Promise<void>, onSignal?: (signal: NodeJS.Signals) => void): void {
  const stop = (signal: NodeJS.Signals) => {
    onSignal?.(signal);
    close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

/** A certificate and key read from files (a Secret volume's tls.crt and tls.key); an error names the flag and file. */
export function readTlsFiles(certFile: string, keyFile: string): { cert: string; key: string } {
  const read = (flag: string, file: string) => {
    try {
      return readFileSync(file, 'utf8');
    } catch (err) {
      throw new Error(`${flag}: cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
  };
  return { cert: read('--tls-cert', certFile), key: read('--tls-key', keyFile) };
}
