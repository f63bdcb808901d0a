// Pod runtime hook, wildcard listeners: in a real pod, a server on 0.0.0.0 (or ::, or no host) is reached on the pod IP
// and on the pod's own `lo`. A process cannot bind two addresses with one socket short of the host's wildcard (which
// would make pods collide), so the program's server binds the pod IP and a *companion* server binds the pod loopback on
// the same port. The companion hands every connection to the program's server (`server.emit('connection', socket)`,
// what net's own onconnection does), which is how net, http, https, tls, http2 and grpc-js servers take connections.
// The program sees one server:
// - 'listening' is held until both are bound; if the companion cannot bind, the listen fails with its error;
// - connections through the companion count in the server's `_connections`, so close() waits for them and
//   maxConnections covers both; the companion reads allowHalfOpen, noDelay, keepAlive, ... from the server;
// - close(), ref() and unref() act on both; address() is the pod IP's.
// Node internals relied on (checked on Node 24): Server#_connections/_unref and Socket#server/_server.
import net from 'node:net';

const COMPANION = Symbol('gwlab.companion');
/** Options net's onconnection reads from the server it accepted on: the companion reads them from the program's. */
const DELEGATED = [
  '_connections',
  'maxConnections',
  'allowHalfOpen',
  'pauseOnConnect',
  'noDelay',
  'keepAlive',
  'keepAliveInitialDelay',
  'highWaterMark',
  'blockList',
] as const;

type Listen = (this: net.Server, ...args: any[]) => net.Server;

/** Patches close/ref/unref so that they reach a server's companion too. Once per process. */
export function installCompanionLifecycle(): void {
  const proto = net.Server.prototype as any;
  for (const m of ['close', 'ref', 'unref'] as const) {
    const orig = proto[m];
    proto[m] = function (this: any, ...args: unknown[]) {
      const c: net.Server | undefined = this[COMPANION];
      if (c) {
        if (m === 'close') this[COMPANION] = undefined;
        if (m !== 'close' || (c as any)._handle) c[m]();
      }
      return orig.apply(this, args);
    };
  }
}

/**
 * Listens `server` on `opts` (host = the pod IP) through `origListen`, and a companion on `loopback` at the port the
 * server got. `cb` and the program's 'listening' listeners run once both are bound.
 */
export function listenWithCompanion(
  server: net.Server,
  origListen: Listen,
  opts: Record<string, any>,
  cb: (() => void) | undefined,
  loopback: string,
): net.Server {
  const s = server as any;
  if (s._handle) return origListen.call(server, opts); // already listening: Node throws ERR_SERVER_ALREADY_LISTEN
  const ownEmit = Object.getOwnPropertyDescriptor(s, 'emit');
  const restoreEmit = () => {
    if (ownEmit) Object.defineProperty(s, 'emit', ownEmit);
    else delete s.emit;
  };
  const emit = s.emit as (event: string | symbol, ...a: unknown[]) => boolean;
  s.emit = function (this: net.Server, event: string | symbol, ...a: unknown[]) {
    if (event === 'error') restoreEmit();
    if (event !== 'listening') return emit.call(this, event, ...a);
    restoreEmit();
    startCompanion(server, origListen, opts, loopback, (err) => {
      if (!err) return void emit.call(this, 'listening');
      // As if the listen itself had failed: no handle, then 'error'.
      s[COMPANION] = undefined;
      server.close();
      emit.call(this, 'error', err);
    });
    return true;
  };
  return cb ? origListen.call(server, opts, cb) : origListen.call(server, opts);
}

function startCompanion(
  server: net.Server,
  origListen: Listen,
  opts: Record<string, any>,
  loopback: string,
  done: (err?: Error) => void,
): void {
  const s = server as any;
  const port = (server.address() as net.AddressInfo).port;
  const c = new net.Server() as any;
  for (const k of DELEGATED) {
    Object.defineProperty(c, k, {
      get: () => s[k],
      set: (v) => {
        s[k] = v;
      },
      configurable: true,
    });
  }
  s[COMPANION] = c;
  if (s._unref) c.unref();
  c.on('connection', (socket: any) => {
    socket.server = server;
    socket._server = server;
    server.emit('connection', socket);
  });
  c.on('drop', (d: unknown) => server.emit('drop', d));
  // A bind error fails the listen; errors once listening (accept) are the program's to see.
  c.on('error', (err: Error) => (c.listening ? server.emit('error', err) : done(err)));
  origListen.call(c, { host: loopback, port, backlog: opts.backlog }, () => {
    // The program may have closed its server while the companion was binding.
    if (s[COMPANION] !== c || !s._handle) {
      c.close();
      return;
    }
    done();
  });
}
