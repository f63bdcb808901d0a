// UDP requests as upstream's conformance/utils/udp/udp.go (Gateway API v1.6.1): ExpectEchoResponse[FromBackend] (a
// probe datagram on a new socket every second until the timeout; each try waits 2 s for the answer; when a service or
// namespace is expected, the echo's JSON must name it), and the weighted test's udpEchoSendOnce (the pod that answered
// one datagram; conformance/tests/udproute-weighted-routing.go).
import { createSocket } from 'node:dgram';
import { setTimeout as sleep } from 'node:timers/promises';

export interface UdpExpectedResponse {
  service?: string;
  namespace?: string;
}

interface EchoResponse {
  request?: string;
  namespace?: string;
  service?: string;
  pod?: string;
}

function splitAddr(addr: string): { host: string; port: number } {
  const m = /^\[?(.*?)\]?:(\d+)$/.exec(addr);
  if (!m) throw new Error(`not a host:port address: ${addr}`);
  return { host: m[1], port: Number(m[2]) };
}

/** One datagram to `addr` and the first answer on the same (connected) socket, within `timeoutMs`. */
export async function udpExchange(addr: string, payload: string | Buffer, timeoutMs: number): Promise<Buffer> {
  const { host, port } = splitAddr(addr);
  const sock = createSocket(host.includes(':') ? 'udp6' : 'udp4');
  try {
    return await new Promise<Buffer>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`i/o timeout after ${timeoutMs} ms`)), timeoutMs);
      sock.on('error', (e) => {
        clearTimeout(timer);
        reject(e);
      });
      sock.on('message', (m) => {
        clearTimeout(timer);
        resolve(m);
      });
      sock.connect(port, host, () => sock.send(payload));
    });
  } finally {
    sock.close();
  }
}

/** Upstream's ExpectEchoResponseFromBackend (ExpectEchoResponse when `expected` is empty). */
export async function expectEchoResponseFromBackend(
  timeoutMs: number,
  gwAddr: string,
  expected: UdpExpectedResponse = {},
): Promise<void> {
  const probe = 'gateway-api-conformance-udp-echo';
  const deadline = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    try {
      const buf = await udpExchange(gwAddr, probe, 2000);
      if (!expected.service && !expected.namespace) return;
      const resp = JSON.parse(buf.toString('utf8')) as EchoResponse;
      if (expected.service && resp.service !== expected.service)
        last = `UDP echo response service="${resp.service}" did not match expected "${expected.service}" (pod=${resp.pod})`;
      else if (expected.namespace && resp.namespace !== expected.namespace)
        last = `UDP echo response namespace="${resp.namespace}" did not match expected "${expected.namespace}" (pod=${resp.pod})`;
      else return;
    } catch (err) {
      last = (err as Error).message;
    }
    if (Date.now() >= deadline) break;
    await sleep(1000);
  }
  const what =
    expected.service || expected.namespace
      ? ` with expected backend service="${expected.service ?? ''}" namespace="${expected.namespace ?? ''}"`
      : '';
  throw new Error(`UDP echo probe never succeeded against ${gwAddr}${what}: ${last}`);
}

/** The weighted test's udpEchoSendOnce: the pod named in the answer to one datagram. */
export async function udpEchoSendOnce(gwAddr: string, timeoutMs: number): Promise<string> {
  const buf = await udpExchange(gwAddr, 'gateway-api-conformance-udp-weight\n', timeoutMs);
  let resp: EchoResponse;
  try {
    resp = JSON.parse(buf.toString('utf8'));
  } catch (err) {
    throw new Error(`decoding UDP echo response ${JSON.stringify(buf.toString('utf8'))}: ${(err as Error).message}`);
  }
  if (!resp.pod) throw new Error(`UDP echo response missing pod name: ${JSON.stringify(buf.toString('utf8'))}`);
  return resp.pod;
}
