// bench:proxy's closed-loop generators for the HTTPS and HTTP/2 paths (autocannon speaks neither HTTP/2 nor a new
// TLS connection per request): `concurrency` loops, each sending its next request when the previous answer ended,
// for `seconds`; over HTTPS/1.1 on kept-alive connections (one per loop) or a new TLS connection per request (the
// handshakes/s figure), over HTTP/2 on `sessions` sessions sharing the loops as concurrent streams (h2 over TLS or
// h2c). Every request must answer 200; anything else counts as an error. Latency per request, p50/p99.
import http2 from 'node:http2';
import https from 'node:https';
import { percentileOfSorted, round2 } from '../shared/stats.ts';

export interface LoadTarget {
  port: number;
  path: string;
  host: string;
  /** HTTPS and h2: the CA to trust and the SNI; absent for h2c. */
  tls?: { ca: string; servername: string };
}

export interface LoadResult {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  requests: number;
}

function summarize(lat: number[], errors: number, ms: number): LoadResult {
  lat.sort((a, b) => a - b);
  return {
    rps: Math.round((lat.length * 1000) / ms),
    p50: round2(percentileOfSorted(lat, 50) ?? 0),
    p99: round2(percentileOfSorted(lat, 99) ?? 0),
    errors,
    requests: lat.length,
  };
}

/** HTTPS/1.1: kept-alive connections (one per loop), or a new TLS connection (handshake) per request. */
export async function httpsLoad(
  t: LoadTarget,
  o: { concurrency: number; seconds: number; newConnection: boolean },
): Promise<LoadResult> {
  const agent = o.newConnection ? false : new https.Agent({ keepAlive: true, maxSockets: o.concurrency });
  const lat: number[] = [];
  let errors = 0;
  const start = performance.now();
  const end = start + o.seconds * 1000;
  const one = () =>
    new Promise<void>((resolve) => {
      const t0 = performance.now();
      const req = https.request(
        {
          host: '127.0.0.1',
          port: t.port,
          path: t.path,
          headers: { host: t.host },
          ca: t.tls!.ca,
          servername: t.tls!.servername,
          agent,
          ...(o.newConnection ? { ALPNProtocols: ['http/1.1'] } : {}),
        } as https.RequestOptions,
        (res) => {
          res.resume();
          res.on('end', () => {
            if (res.statusCode === 200) lat.push(performance.now() - t0);
            else errors++;
            resolve();
          });
        },
      );
      req.on('error', () => {
        errors++;
        resolve();
      });
      req.end();
    });
  const loop = async () => {
    while (performance.now() < end) await one();
  };
  await Promise.all(Array.from({ length: o.concurrency }, loop));
  if (agent) agent.destroy();
  return summarize(lat, errors, performance.now() - start);
}

/** HTTP/2 (h2 over TLS when t.tls, else h2c): `concurrency` streams in flight over `sessions` sessions. */
export async function h2Load(
  t: LoadTarget,
  o: { concurrency: number; sessions: number; seconds: number },
): Promise<LoadResult> {
  const origin = `${t.tls ? 'https' : 'http'}://127.0.0.1:${t.port}`;
  const sessions = Array.from({ length: o.sessions }, () => {
    const s = http2.connect(origin, t.tls ? { ca: t.tls.ca, servername: t.tls.servername } : {});
    s.on('error', () => {});
    return s;
  });
  const lat: number[] = [];
  let errors = 0;
  const start = performance.now();
  const end = start + o.seconds * 1000;
  const one = (s: http2.ClientHttp2Session) =>
    new Promise<void>((resolve) => {
      const t0 = performance.now();
      let status = 0;
      const req = s.request({ ':path': t.path, ':authority': t.host });
      req.on('response', (h) => {
        status = Number(h[':status']);
      });
      req.resume();
      req.on('end', () => {
        if (status === 200) lat.push(performance.now() - t0);
        else errors++;
        resolve();
      });
      req.on('error', () => {
        errors++;
        resolve();
      });
    });
  const loop = async (i: number) => {
    const s = sessions[i % sessions.length]!;
    while (performance.now() < end) await one(s);
  };
  await Promise.all(Array.from({ length: o.concurrency }, (_, i) => loop(i)));
  for (const s of sessions) s.close();
  return summarize(lat, errors, performance.now() - start);
}
