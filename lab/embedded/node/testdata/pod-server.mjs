// A pod program for the runtime hook tests: binds the addresses a real workload binds, as written, and reports who
// it is and who called. HTTP on 0.0.0.0:8080, an "admin" on 127.0.0.1:19000, h2c on localhost:19001, HTTPS on
// 127.0.0.1:19443 (certificate from the mounted /etc/tls), gRPC on [::]:9000. Prints "ready" when all listen.
import { readFileSync } from 'node:fs';
import http from 'node:http';
import http2 from 'node:http2';
import https from 'node:https';
import os from 'node:os';
import grpc from '@grpc/grpc-js';
import { echoService } from './echo-service.mjs';

const me = os.hostname();
const who = (sock) =>
  JSON.stringify({ pod: me, peer: sock.remoteAddress, local: sock.localAddress, port: sock.localPort });
const listening = (srv) => new Promise((r) => srv.once('listening', r));

const main = http.createServer((_q, r) => r.end(who(_q.socket))).listen(8080, '0.0.0.0');
const admin = http.createServer((q, r) => r.end(who(q.socket))).listen(19000, '127.0.0.1');
const h2 = http2.createServer();
h2.on('stream', (stream) => {
  stream.respond({ ':status': 200 });
  stream.end(who(stream.session.socket));
});
h2.listen(19001, 'localhost');
const tls = https
  .createServer({ key: readFileSync('/etc/tls/tls.key'), cert: readFileSync('/etc/tls/tls.crt') }, (q, r) =>
    r.end(who(q.socket)),
  )
  .listen(19443, '127.0.0.1');
await Promise.all([main, admin, h2, tls].map(listening));

const server = new grpc.Server();
server.addService(echoService, {
  echo: (call, cb) => cb(null, { pod: me, peer: call.getPeer(), msg: call.request.msg }),
});
await new Promise((resolve, reject) =>
  server.bindAsync('[::]:9000', grpc.ServerCredentials.createInsecure(), (err) => (err ? reject(err) : resolve())),
);
console.log('ready', JSON.stringify({ pod: me, main: main.address(), admin: admin.address() }));
process.on('SIGTERM', () => process.exit(0));
