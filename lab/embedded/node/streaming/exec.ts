// pods/exec: runs a command in a container's context (its environment, working directory, mounts and network
// identity through the pod runtime hook) and streams stdin/stdout/stderr, over
// - WebSocket, subprotocols v5.channel.k8s.io (kubectl 1.32's default; the client closes stdin with [255, 0]) and
//   v4.channel.k8s.io (client-node): channels 0 stdin, 1 stdout, 2 stderr, 3 status, 4 resize;
// - SPDY/3.1 after an HTTP upgrade (X-Stream-Protocol-Version v4.channel.k8s.io ...): one stream per streamtype.
// The status is a metav1.Status: Success, or NonZeroExitCode with the exit code as a cause, as kubectl reads it.
// There is no pseudo-terminal: `-t` runs with pipes.
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import type { SubresourceRequest } from '../../apiserver/index.ts';
import { boolParam } from '../../apiserver/request-info.ts';
import type { Kubelet, PodWorker } from '../kubelet/kubelet.ts';
import type { ContainerExit, ContainerProcess } from '../runtime/runner.ts';
import { SpdySession, type SpdyStream } from './spdy.ts';
import { pickContainer, rejectUpgrade, upgradeOf } from './subresource-util.ts';

const WS_PROTOCOLS = [
  'v5.channel.k8s.io',
  'v4.channel.k8s.io',
  'v3.channel.k8s.io',
  'v2.channel.k8s.io',
  'channel.k8s.io',
];
const SPDY_PROTOCOLS = ['v4.channel.k8s.io', 'v3.channel.k8s.io', 'v2.channel.k8s.io', 'channel.k8s.io'];

export function execStatus(command: string[], exit: ContainerExit | undefined, startError?: string): object {
  if (startError || exit?.reason === 'StartError') {
    return {
      metadata: {},
      status: 'Failure',
      message: startError ?? exit?.message ?? 'cannot start',
      reason: 'InternalError',
      details: { causes: [{ message: startError ?? exit?.message }] },
      code: 500,
    };
  }
  if (exit && exit.exitCode === 0) return { metadata: {}, status: 'Success' };
  const code = exit?.exitCode ?? 1;
  return {
    metadata: {},
    status: 'Failure',
    message: `command terminated with non-zero exit code: error executing command [${command.join(' ')}], exit code ${code}`,
    reason: 'NonZeroExitCode',
    details: { causes: [{ reason: 'ExitCode', message: String(code) }] },
  };
}

/** Waits for the process and for its output streams to be drained. */
async function finished(proc: ContainerProcess): Promise<ContainerExit> {
  const ends = [proc.stdout, proc.stderr]
    .filter((s): s is NodeJS.ReadableStream => !!s)
    .map(
      (s) =>
        new Promise<void>((r) => ((s as any).readableEnded ? r() : s.once('end', () => r()).once('close', () => r()))),
    );
  const exit = await proc.exited;
  await Promise.race([Promise.all(ends), new Promise((r) => setTimeout(r, 2000))]);
  return exit;
}

export function execHandler(kubelet: Kubelet) {
  const wss = new WebSocketServer({
    noServer: true,
    perMessageDeflate: false,
    handleProtocols: (protocols) => WS_PROTOCOLS.find((p) => protocols.has(p)) ?? false,
  });
  return async (r: SubresourceRequest): Promise<void> => {
    const pod = r.object as any;
    const up = upgradeOf(r);
    if (!up) return;
    const socket = up.socket;
    const q = r.query;
    const command = q.getAll('command');
    if (command.length === 0) return rejectUpgrade(socket, 400, 'BadRequest', 'you must specify at least 1 command');
    const pick = pickContainer(pod, q.get('container'));
    if (!pick.name) return rejectUpgrade(socket, 400, 'BadRequest', pick.error!);
    const worker = kubelet.worker(pod.metadata.uid);
    if (!worker?.isRunning(pick.name)) {
      return rejectUpgrade(
        socket,
        400,
        'BadRequest',
        `container ${pick.name} is not running in pod ${pod.metadata.name}`,
      );
    }
    const target: ExecTarget = { worker, container: pick.name, command, stdin: boolParam(q, 'stdin') };
    const upgrade = String(r.req.headers.upgrade ?? '').toLowerCase();
    if (upgrade === 'websocket') return execOverWebSocket(wss, r, socket, up.head, target);
    if (upgrade === 'spdy/3.1') return execOverSpdy(r, socket, up.head, target);
    return rejectUpgrade(socket, 400, 'BadRequest', 'exec needs a WebSocket or SPDY/3.1 upgrade');
  };
}

/** What runs: the command, in that container of the pod's worker. */
interface ExecTarget {
  worker: PodWorker;
  container: string;
  command: string[];
  /** Whether the client sends stdin (else it is closed at once). */
  stdin: boolean;
}

/** WebSocket channels: 0 stdin, 1 stdout, 2 stderr, 3 status (the command's end), [255, 0] closes stdin (v5). */
function execOverWebSocket(
  wss: WebSocketServer,
  r: SubresourceRequest,
  socket: Duplex,
  head: Buffer,
  { worker, container, command, stdin: wantStdin }: ExecTarget,
): void {
  wss.handleUpgrade(r.req, socket, head, (ws) => {
    let proc: ContainerProcess;
    try {
      proc = worker.startExec(container, command);
    } catch (err) {
      ws.send(
        Buffer.concat([
          Buffer.of(3),
          Buffer.from(JSON.stringify(execStatus(command, undefined, (err as Error).message))),
        ]),
      );
      ws.close(1000);
      return;
    }
    if (!wantStdin) proc.stdin?.end();
    proc.stdout?.on('data', (d: Buffer) => ws.send(Buffer.concat([Buffer.of(1), d])));
    proc.stderr?.on('data', (d: Buffer) => ws.send(Buffer.concat([Buffer.of(2), d])));
    ws.on('message', (raw: Buffer) => {
      const buf = Buffer.isBuffer(raw) ? raw : Buffer.from(raw);
      if (buf[0] === 0) proc.stdin?.write(buf.subarray(1));
      else if (buf[0] === 255 && buf[1] === 0) proc.stdin?.end();
    });
    ws.on('close', () => {
      if (proc.running) void proc.stop(0);
    });
    ws.on('error', () => undefined);
    void finished(proc).then((exit) => {
      const status = execStatus(command, exit, proc.startError);
      if (ws.readyState !== ws.OPEN) return;
      ws.send(Buffer.concat([Buffer.of(3), Buffer.from(JSON.stringify(status))]));
      ws.close(1000);
    });
  });
}

/** SPDY/3.1: the client opens error, stdin, stdout and stderr streams; the command starts once they are there. */
function execOverSpdy(
  r: SubresourceRequest,
  socket: Duplex,
  head: Buffer,
  { worker, container, command, stdin: wantStdin }: ExecTarget,
): void {
  const q = r.query;
  const offeredVersions = String(r.req.headers['x-stream-protocol-version'] ?? '')
    .split(',')
    .map((s) => s.trim());
  const version = SPDY_PROTOCOLS.find((p) => offeredVersions.includes(p));
  if (!version) {
    rejectUpgrade(
      socket,
      400,
      'BadRequest',
      `unsupported X-Stream-Protocol-Version; use one of ${SPDY_PROTOCOLS.join(', ')}`,
    );
    return;
  }
  socket.write(
    `HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: ${version}\r\n\r\n`,
  );
  const session = new SpdySession({ write: (b) => socket.write(b), end: () => socket.end() });
  socket.on('data', (d: Buffer) => session.feed(d));
  socket.on('close', () => session.close());
  session.on('error', () => undefined);
  if (head.length) session.feed(head);
  const streams: Record<string, SpdyStream> = {};
  const expected = [
    'error',
    ...(wantStdin ? ['stdin'] : []),
    ...(q.get('stdout') !== 'false' ? ['stdout'] : []),
    ...(boolParam(q, 'stderr') ? ['stderr'] : []),
  ];
  let started = false;
  const start = () => {
    if (started) return;
    started = true;
    let proc: ContainerProcess;
    try {
      proc = worker.startExec(container, command);
    } catch (err) {
      streams.error?.end(JSON.stringify(execStatus(command, undefined, (err as Error).message)));
      return;
    }
    if (streams.stdin) streams.stdin.pipe(proc.stdin as NodeJS.WritableStream);
    else proc.stdin?.end();
    if (streams.stdout) proc.stdout?.pipe(streams.stdout);
    else proc.stdout?.resume();
    if (streams.stderr) proc.stderr?.pipe(streams.stderr);
    else proc.stderr?.resume();
    session.on('close', () => {
      if (proc.running) void proc.stop(0);
    });
    void finished(proc).then((exit) => {
      const status = execStatus(command, exit, proc.startError);
      if ((status as { status: string }).status !== 'Success') streams.error?.write(JSON.stringify(status));
      streams.error?.end();
      streams.stdin?.destroy();
      setTimeout(() => socket.end(), 100);
    });
  };
  session.on('stream', (s: SpdyStream) => {
    void s.reply();
    s.on('error', () => undefined);
    streams[s.headers.streamtype] = s;
    if (expected.every((t) => streams[t])) start();
  });
  // A client that opens fewer streams than the query asked for still gets its command run.
  setTimeout(() => streams.error && start(), 1000).unref();
}
