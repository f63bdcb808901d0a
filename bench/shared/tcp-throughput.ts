// Bulk TCP throughput, for the benchmarks of the lab's data paths (bench:pods' LoadBalancer, relay.ts's service
// proxy): a client that sends a number of bytes and waits for the sink's count of them, the same over parallel
// connections timed in MB/s, and the bare Node relay (net.Server + socket.pipe both ways: the runtime's own ceiling)
// that both compare against.
import net from 'node:net';

/** The command-line options of a throughput comparison (util.parseArgs): MB per run, connections, rounds. */
export const THROUGHPUT_OPTIONS = {
  mb: { type: 'string', default: '256' },
  conns: { type: 'string', default: '4' },
  rounds: { type: 'string', default: '3' },
} as const;

/** Sends `bytes` to host:port and waits for the sink to confirm them (it answers its byte count on half-close). */
export function transfer(host: string, bytes: number, port: number): Promise<void> {
  const chunk = Buffer.alloc(64 * 1024, 120);
  return new Promise((resolve, reject) => {
    const s = net.connect({ host, port, noDelay: true });
    let left = bytes;
    const pump = () => {
      while (left > 0) {
        const n = Math.min(left, chunk.length);
        left -= n;
        if (!s.write(n === chunk.length ? chunk : chunk.subarray(0, n))) return void s.once('drain', pump);
      }
      s.end();
    };
    s.once('connect', pump);
    let reply = '';
    s.setEncoding('utf8');
    s.on('data', (d) => (reply += d));
    s.on('end', () => (Number(reply) === bytes ? resolve() : reject(new Error(`sink got ${reply} of ${bytes}`))));
    s.on('error', reject);
  });
}

/** MB/s of one transfer of `mb` MB split over `conns` parallel connections. */
export async function transferMBps(host: string, port: number, mb: number, conns: number): Promise<number> {
  const total = mb * 1024 * 1024;
  const t0 = process.hrtime.bigint();
  await Promise.all(Array.from({ length: conns }, () => transfer(host, Math.floor(total / conns), port)));
  const s = Number(process.hrtime.bigint() - t0) / 1e9;
  return total / 1024 / 1024 / s;
}

/** The bare relay's connection handler: each client connection piped both ways to a new one to host:port. */
export function pipeTo(host: string, port: number): (client: net.Socket) => void {
  return (c) => {
    const u = net.connect({ host, port, allowHalfOpen: true });
    c.pipe(u);
    u.pipe(c);
    c.on('error', () => u.destroy());
    u.on('error', () => c.destroy());
  };
}
