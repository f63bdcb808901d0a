// A workload for the embedded cluster tests: HTTP on 0.0.0.0:8080, an admin on 127.0.0.1:19000, gRPC on [::]:9000,
// and with LOW_ADMIN_PORT set, the admin on 127.0.0.1:<that port> too (a port below 1024 in the tests).
//   /          who am I          /self    what localhost:19000 answers (my own admin)
//   /config    the file at CONFIG_PATH (a ConfigMap at its absolute mountPath)
//   /pods      pod names of my namespace through in-cluster config (service-account token)
//   /grpc?target=host:port      an Echo call through gRPC
//   /env       my environment     /cwd    my working directory
//   /file?path=/abs/path          a file's bytes, base64 (read through the hook's mountPath remap)
//   /get?url=http://host:port/    what that URL answers from this pod (JSON), or {code} when fetch fails (ECONNREFUSED)
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import grpc from '@grpc/grpc-js';
import { echoService } from './echo-service.mjs';

const me = os.hostname();
const json = (res, code, body) => {
  res.writeHead(code, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};

const app = http.createServer(async (req, res) => {
  const url = new URL(req.url, 'http://x');
  console.log(`${req.method} ${url.pathname}`);
  try {
    if (url.pathname === '/self') return json(res, 200, await (await fetch('http://localhost:19000/')).json());
    if (url.pathname === '/env') return json(res, 200, process.env);
    if (url.pathname === '/get') {
      try {
        return json(res, 200, await (await fetch(url.searchParams.get('url'))).json());
      } catch (e) {
        return json(res, 200, { code: e?.cause?.code ?? String(e?.message ?? e) });
      }
    }
    if (url.pathname === '/cwd') return json(res, 200, { cwd: process.cwd() });
    if (url.pathname === '/file') {
      return json(res, 200, { base64: (await readFile(url.searchParams.get('path'))).toString('base64') });
    }
    if (url.pathname === '/config') return json(res, 200, { config: await readFile(process.env.CONFIG_PATH, 'utf8') });
    if (url.pathname === '/pods') {
      const k8s = await import('@kubernetes/client-node');
      const kc = new k8s.KubeConfig();
      kc.loadFromDefault();
      const api = kc.makeApiClient(k8s.CoreV1Api);
      const ns = (await readFile('/var/run/secrets/kubernetes.io/serviceaccount/namespace', 'utf8')).trim();
      const list = await api.listNamespacedPod({ namespace: ns });
      return json(res, 200, { server: kc.getCurrentCluster()?.server, pods: list.items.map((p) => p.metadata.name) });
    }
    if (url.pathname === '/grpc') {
      const Client = grpc.makeGenericClientConstructor(echoService, 'Echo');
      const c = new Client(url.searchParams.get('target'), grpc.credentials.createInsecure());
      const reply = await new Promise((resolve, reject) =>
        c.echo({ msg: 'hello' }, { deadline: Date.now() + 5000 }, (e, r) => (e ? reject(e) : resolve(r))),
      );
      c.close();
      return json(res, 200, reply);
    }
    json(res, 200, { pod: me, greeting: process.env.GREETING ?? null, peer: req.socket.remoteAddress });
  } catch (e) {
    json(res, 500, { error: String(e?.message ?? e) });
  }
});
const admin = http.createServer((_req, res) => json(res, 200, { admin: me }));
app.listen(8080, '0.0.0.0');
admin.listen(19000, '127.0.0.1');
if (process.env.LOW_ADMIN_PORT) {
  http
    .createServer((_req, res) => json(res, 200, { admin: me }))
    .listen(Number(process.env.LOW_ADMIN_PORT), '127.0.0.1');
}
const server = new grpc.Server();
server.addService(echoService, { echo: (call, cb) => cb(null, { pod: me, msg: call.request.msg }) });
server.bindAsync('[::]:9000', grpc.ServerCredentials.createInsecure(), () => {
  console.log(`listening pod=${me} http=8080 admin=19000 grpc=9000`);
});
process.on('SIGTERM', () => {
  console.log('shutting down');
  process.exit(0);
});
