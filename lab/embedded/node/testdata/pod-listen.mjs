// A pod program for the runtime hook tests: what a wildcard listener (bound to the pod IP and, through a companion, to
// the pod loopback; hook-listen.ts) looks like to the program that owns it. Prints one RESULT JSON line.
//   ephemeral  listen(0): address() is the pod IP; 127.0.0.1:<port> already answers in the listening callback
//   close      close() waits for a connection that came in on 127.0.0.1, getConnections() counts it, then both refuse
//   conflict   0.0.0.0:<p> after 127.0.0.1:<p> is taken fails with EADDRINUSE, as on Linux, and is not listening
//   unref      a process whose only handle is an unref()ed wildcard server exits
import { execFile } from 'node:child_process';
import net from 'node:net';

const listening = (srv, ...args) =>
  new Promise((resolve, reject) => {
    srv.once('error', reject);
    srv.listen(...args, () => resolve(srv.address()));
  });
// A dial to a port nobody listens on can connect to itself: the kernel may pick that very port as the ephemeral
// source port on the same address (TCP simultaneous open). Seen once in a CI run (podIPAfter connected after the
// close); such a connection is not a listener answering, so it is dialled again.
const dial = (host, port, tries = 3) =>
  new Promise((resolve) => {
    const s = net.connect(port, host, () => {
      if (s.localPort === s.remotePort && s.localAddress === s.remoteAddress && tries > 1) {
        s.destroy();
        resolve(dial(host, port, tries - 1));
      } else resolve(s);
    });
    s.on('error', (e) => resolve(e.code)); // after the connect: ignored
  });
const quiet = (s) => s.on('error', () => undefined); // resets from the other end are not what is checked
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const checks = {
  ephemeral: async () => {
    const srv = net.createServer((s) => quiet(s).end('hi'));
    let inCallback;
    const addr = await new Promise((resolve) =>
      srv.listen(0, async () => {
        const s = await dial('127.0.0.1', srv.address().port);
        inCallback = typeof s === 'string' ? s : 'connected';
        if (typeof s !== 'string') s.destroy();
        resolve(srv.address());
      }),
    );
    const viaPodIP = await dial(addr.address, addr.port);
    if (typeof viaPodIP !== 'string') viaPodIP.destroy();
    srv.close();
    return { address: addr.address, inCallback, viaPodIP: typeof viaPodIP === 'string' ? viaPodIP : 'connected' };
  },
  close: async () => {
    const srv = net.createServer(quiet); // net's close() leaves open connections alone (http's ends idle ones)
    const { address, port } = await listening(srv, 0, '0.0.0.0');
    const sock = await dial('127.0.0.1', port);
    await sleep(50);
    const counted = await new Promise((r) => srv.getConnections((_e, n) => r(n)));
    let closed = false;
    srv.close(() => {
      closed = true;
    });
    await sleep(200);
    const closedWhileOpen = closed;
    sock.destroy();
    await sleep(200);
    return {
      counted,
      closedWhileOpen,
      closedAfter: closed,
      loopbackAfter: await dial('127.0.0.1', port),
      podIPAfter: await dial(address, port),
    };
  },
  conflict: async () => {
    const lo = net.createServer();
    const { port } = await listening(lo, 0, '127.0.0.1');
    const wild = net.createServer();
    const err = await listening(wild, port).then(
      () => 'listened',
      (e) => e.code,
    );
    lo.close();
    return { err, listening: wild.listening };
  },
  unref: () =>
    new Promise((resolve) => {
      const code = 'require("node:net").createServer().listen(0, function () { this.unref(); })';
      const child = execFile(process.execPath, ['-e', code], { timeout: 4000 }, (e) =>
        resolve(e ? `did not exit: ${e.killed ? 'killed' : e.code}` : 'exited'),
      );
      child.stdin?.end();
    }),
};

const only = process.argv.slice(2);
const results = {};
for (const [name, fn] of Object.entries(checks)) {
  if (only.length && !only.includes(name)) continue;
  try {
    results[name] = {
      ok: await Promise.race([fn(), new Promise((_, rej) => setTimeout(() => rej(new Error('timeout')), 5000))]),
    };
  } catch (e) {
    results[name] = { error: `${e.code ?? ''} ${e.message}` };
  }
}
console.log('RESULT ' + JSON.stringify(results));
process.exit(0);
