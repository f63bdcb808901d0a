// A pod program for the runtime hook tests: every client API the hook must cover, each against "localhost" or a
// cluster name, printed as one JSON line. Run with a pod's identity (like kubectl exec). An argument that is an
// http:// URL is fetched with http.get: its JSON body, or the error code (ECONNREFUSED) when the connect fails.

import dns from 'node:dns';
import { createReadStream, readFileSync } from 'node:fs';
import fsp from 'node:fs/promises';
import http from 'node:http';
import http2 from 'node:http2';
import https from 'node:https';
import { createRequire } from 'node:module';
import net from 'node:net';
import os from 'node:os';
import tls from 'node:tls';
import grpc from '@grpc/grpc-js';
import { request as undiciRequest } from 'undici';
import { echoService } from './echo-service.mjs';

const require = createRequire(import.meta.url);
const body = (res) =>
  new Promise((resolve, reject) => {
    let s = '';
    res.setEncoding('utf8');
    res.on('data', (c) => (s += c));
    res.on('end', () => resolve(s));
    res.on('error', reject);
  });
const json = (s) => JSON.parse(s);

const checks = {
  hostname: async () => os.hostname(),
  netLocalhost: () =>
    new Promise((resolve, reject) => {
      const s = net.connect(19000, 'localhost', () => s.end('GET / HTTP/1.0\r\n\r\n'));
      let d = '';
      s.on('data', (c) => (d += c));
      s.on('end', () => resolve(json(d.slice(d.indexOf('\r\n\r\n') + 4))));
      s.on('error', reject);
    }),
  http127: () =>
    new Promise((resolve, reject) =>
      http.get('http://127.0.0.1:19000/', (r) => body(r).then(json).then(resolve, reject)).on('error', reject),
    ),
  httpIPv6Loopback: () =>
    new Promise((resolve, reject) =>
      http.get('http://[::1]:19000/', (r) => body(r).then(json).then(resolve, reject)).on('error', reject),
    ),
  fetchLocalhost: async () => json(await (await fetch('http://localhost:19000/')).text()),
  undici: async () => json(await (await undiciRequest('http://localhost:19000/')).body.text()),
  http2: () =>
    new Promise((resolve, reject) => {
      const c = http2.connect('http://localhost:19001');
      c.on('error', reject);
      const req = c.request({ ':path': '/' });
      let d = '';
      req.setEncoding('utf8');
      req.on('data', (x) => (d += x));
      req.on('end', () => {
        c.close();
        resolve(json(d));
      });
      req.on('error', reject);
    }),
  https: () =>
    new Promise((resolve, reject) =>
      https
        .get('https://localhost:19443/', { rejectUnauthorized: false }, (r) => body(r).then(json).then(resolve, reject))
        .on('error', reject),
    ),
  tls: () =>
    new Promise((resolve, reject) => {
      const s = tls.connect({ host: '127.0.0.1', port: 19443, rejectUnauthorized: false }, () =>
        s.end('GET / HTTP/1.0\r\n\r\n'),
      );
      let d = '';
      s.on('data', (c) => (d += c));
      s.on('end', () => resolve(json(d.slice(d.indexOf('\r\n\r\n') + 4))));
      s.on('error', reject);
    }),
  dnsLookupShort: () =>
    new Promise((resolve, reject) => dns.lookup(process.env.SVC, (e, a) => (e ? reject(e) : resolve(a)))),
  dnsLookupNs: async () => (await dns.promises.lookup(`${process.env.SVC}.${process.env.SVC_NS}`)).address,
  dnsLookupSvc: async () => (await dns.promises.lookup(`${process.env.SVC}.${process.env.SVC_NS}.svc`)).address,
  dnsLookupFqdn: async () =>
    (await dns.promises.lookup(`${process.env.SVC}.${process.env.SVC_NS}.svc.cluster.local`, { all: true })).map(
      (a) => a.address,
    ),
  dnsResolver: () =>
    new Promise((resolve, reject) =>
      new dns.Resolver().resolve4(`${process.env.SVC}.${process.env.SVC_NS}.svc.cluster.local`, (e, a) =>
        e ? reject(e) : resolve(a),
      ),
    ),
  dnsPromisesResolver: async () => new dns.promises.Resolver().resolve4(`${process.env.SVC}.${process.env.SVC_NS}`),
  dnsResolve4Module: async () => dns.promises.resolve4(process.env.SVC),
  dnsMissing: async () => {
    try {
      await dns.promises.lookup(`nope.${process.env.SVC_NS}.svc.cluster.local`);
      return 'resolved?!';
    } catch (e) {
      return e.code;
    }
  },
  clusterHttp: async () =>
    json(
      await (
        await fetch(`http://${process.env.SVC}.${process.env.SVC_NS}.svc.cluster.local:${process.env.SVC_HTTP_PORT}/`)
      ).text(),
    ),
  grpc: () =>
    new Promise((resolve, reject) => {
      const Client = grpc.makeGenericClientConstructor(echoService, 'Echo');
      const c = new Client(
        `${process.env.SVC}.${process.env.SVC_NS}.svc.cluster.local:${process.env.SVC_GRPC_PORT}`,
        grpc.credentials.createInsecure(),
      );
      c.echo({ msg: 'hi' }, (err, res) => {
        c.close();
        err ? reject(err) : resolve(res);
      });
    }),
  fsNamedImport: async () => readFileSync('/etc/demo/config.yaml', 'utf8'),
  fsPromises: async () => fsp.readFile('/etc/demo/config.yaml', 'utf8'),
  fsStream: () =>
    new Promise((resolve, reject) => {
      let d = '';
      createReadStream('/etc/demo/config.yaml', 'utf8')
        .on('data', (c) => (d += c))
        .on('end', () => resolve(d))
        .on('error', reject);
    }),
  fsCjs: async () => require('node:fs').readFileSync('/var/run/secrets/kubernetes.io/serviceaccount/token', 'utf8'),
  fsCallbackReaddir: () =>
    new Promise((resolve, reject) =>
      require('node:fs').readdir('/var/run/secrets/kubernetes.io/serviceaccount', (e, l) =>
        e ? reject(e) : resolve(l.sort()),
      ),
    ),
};

const only = process.argv.slice(2);
for (const url of only.filter((a) => a.startsWith('http://'))) {
  checks[url] = () =>
    new Promise((resolve, reject) =>
      http
        .get(url, (r) => body(r).then(json).then(resolve, reject))
        .on('error', (e) => (e.code ? resolve(e.code) : reject(e))),
    );
}
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
