// bench:pods' workload (bench/pods.ts runs it as the image gwlab.bench/app:1): a Node program that takes 200 ms to
// start, then serves HTTP on 8080 and a TCP sink on 9000 (counts bytes, answers the count when the client half-closes).
import http from 'node:http';
import net from 'node:net';

await new Promise((r) => setTimeout(r, 200));
http.createServer((_q, r) => r.end('ok')).listen(8080, '0.0.0.0');
net
  .createServer({ allowHalfOpen: true }, (s) => {
    let n = 0;
    s.on('data', (d) => (n += d.length));
    s.on('end', () => s.end(String(n)));
    s.on('error', () => undefined);
  })
  .listen(9000, '0.0.0.0');
process.on('SIGTERM', () => process.exit(0));
