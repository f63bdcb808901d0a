// The pod runtime hook end to end, with plain processes: two pods bind the same addresses, each reaches itself on
// localhost through every client API, cluster names resolve through the DNS server, and Service traffic (HTTP and
// gRPC) flows through the service proxy; absolute mountPaths read the pod's volumes; os.hostname() is the pod name.
// Each pod's loopback is its own, as a pod's `lo` is in Kubernetes (its network namespace): a listener on 127.0.0.1
// is reached from the pod itself and not from other pods, on neither the pod IP nor the pod loopback address, while
// a listener on 0.0.0.0 is reached on both (0.0.0.0 includes lo).
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { selfSigned as selfSignedCert } from '../../../../system/shared/testing/certs.ts';
import { eventually, Testbed, type TestPod } from '../testing/testbed.ts';

const HERE = dirname(fileURLToPath(import.meta.url));
const SERVER = join(HERE, '..', 'testdata', 'pod-server.mjs');
const CLIENT = join(HERE, '..', 'testdata', 'pod-client.mjs');
const LISTEN = join(HERE, '..', 'testdata', 'pod-listen.mjs');

function selfSigned(): { key: string; cert: string } {
  const { key, cert } = selfSignedCert('localhost');
  return { key, cert };
}

async function get(url: string): Promise<{ pod: string; peer: string }> {
  return (await fetch(url)).json() as Promise<{ pod: string; peer: string }>;
}

function result(output: string): Record<string, { ok?: any; error?: string }> {
  const line = output.split('\n').find((l) => l.startsWith('RESULT '));
  if (!line) throw new Error(`no RESULT line in output:\n${output}`);
  return JSON.parse(line.slice('RESULT '.length));
}

describe('pod runtime hook', () => {
  let tb: Testbed;
  let a: TestPod;
  let b: TestPod;
  let clusterIP: string;
  const env = { SVC: 'echo', SVC_NS: 'apps', SVC_HTTP_PORT: '80', SVC_GRPC_PORT: '9090' };

  beforeAll(async () => {
    tb = await Testbed.start();
    const { key, cert } = selfSigned();
    const volumes = {
      '/etc/tls': { 'tls.key': key, 'tls.crt': cert },
      '/etc/demo': { 'config.yaml': 'greeting: hello\n' },
      '/var/run/secrets/kubernetes.io/serviceaccount': { token: 'tok-123', namespace: 'apps', 'ca.crt': 'CA' },
    };
    a = tb.startPod({ namespace: 'apps', name: 'pod-a', argv: ['node', SERVER], volumes });
    b = tb.startPod({ namespace: 'apps', name: 'pod-b', argv: ['node', SERVER], volumes });
    await eventually(() => a.logs().includes('ready') && b.logs().includes('ready'), 20_000).catch((err) => {
      throw new Error(`${err}\npod-a:\n${a.logs()}\npod-b:\n${b.logs()}`);
    });
    clusterIP = tb.serviceIPs.allocate();
    const ports = [
      { name: 'http', port: 80 },
      { name: 'grpc', port: 9090 },
    ];
    tb.dns.upsertService({ namespace: 'apps', name: 'echo', clusterIP, ports });
    await tb.proxy.apply({
      namespace: 'apps',
      name: 'echo',
      clusterIP,
      ports,
      endpoints: { http: [{ ip: b.ip, port: 8080 }], grpc: [{ ip: b.ip, port: 9000 }] },
    });
  });

  afterAll(async () => {
    await tb?.close();
  });

  it('gives each pod its own addresses: 0.0.0.0:8080 on its pod IP and loopback, 127.0.0.1:19000 on its loopback', async () => {
    expect(a.ip).not.toBe(b.ip);
    expect(a.loopback).not.toBe(b.loopback);
    // The test process is the node, like the kubelet: it sees both addresses of each pod.
    expect(await get(`http://${a.ip}:8080/`)).toMatchObject({ pod: 'pod-a' });
    expect(await get(`http://${b.ip}:8080/`)).toMatchObject({ pod: 'pod-b' });
    expect(await get(`http://${a.loopback}:8080/`)).toMatchObject({ pod: 'pod-a' });
    expect(await get(`http://${a.loopback}:19000/`)).toMatchObject({ pod: 'pod-a' });
    expect(await get(`http://${b.loopback}:19000/`)).toMatchObject({ pod: 'pod-b' });
    await expect(fetch(`http://${a.ip}:19000/`)).rejects.toMatchObject({ cause: { code: 'ECONNREFUSED' } });
    expect(a.logs()).toContain(`"main":{"address":"${a.ip}","family":"IPv4","port":8080}`);
    expect(a.logs()).toContain(`"admin":{"address":"${a.loopback}","family":"IPv4","port":19000}`);
  });

  it("keeps a pod's loopback to itself: another pod is refused on its pod IP and on its loopback address", async () => {
    const r = result(
      (
        await tb.execIn(a, [
          'node',
          CLIENT,
          `http://${b.ip}:19000/`,
          `http://${b.loopback}:19000/`,
          `http://${b.ip}:8080/`,
          `http://${b.loopback}:8080/`,
          `http://${a.loopback}:19000/`,
          'http://127.0.0.1:8080/',
        ])
      ).output,
    );
    expect(r).toEqual({
      [`http://${b.ip}:19000/`]: { ok: 'ECONNREFUSED' },
      [`http://${b.loopback}:19000/`]: { ok: 'ECONNREFUSED' },
      [`http://${b.ip}:8080/`]: { ok: expect.objectContaining({ pod: 'pod-b', peer: a.ip }) },
      [`http://${b.loopback}:8080/`]: { ok: 'ECONNREFUSED' },
      [`http://${a.loopback}:19000/`]: { ok: expect.objectContaining({ pod: 'pod-a', peer: a.loopback }) },
      'http://127.0.0.1:8080/': { ok: expect.objectContaining({ pod: 'pod-a', local: a.loopback }) },
    });
  });

  it('makes a wildcard listener one server to its program: listening, close, conflicts and unref', async () => {
    const r = result((await tb.execIn(a, ['node', LISTEN])).output);
    expect(r).toEqual({
      ephemeral: { ok: { address: a.ip, inCallback: 'connected', viaPodIP: 'connected' } },
      close: {
        ok: {
          counted: 1,
          closedWhileOpen: false,
          closedAfter: true,
          loopbackAfter: 'ECONNREFUSED',
          podIPAfter: 'ECONNREFUSED',
        },
      },
      conflict: { ok: { err: 'EADDRINUSE', listening: false } },
      unref: { ok: 'exited' },
    });
  });

  it('reaches its own pod on localhost with net, http, fetch, undici, http2, https and tls, from the loopback', async () => {
    for (const pod of [a, b]) {
      const r = result(
        (
          await tb.execIn(pod, [
            'node',
            CLIENT,
            'hostname',
            'netLocalhost',
            'http127',
            'httpIPv6Loopback',
            'fetchLocalhost',
            'undici',
            'http2',
            'https',
            'tls',
          ])
        ).output,
      );
      expect(r.hostname).toEqual({ ok: pod.name });
      for (const k of [
        'netLocalhost',
        'http127',
        'httpIPv6Loopback',
        'fetchLocalhost',
        'undici',
        'http2',
        'https',
        'tls',
      ]) {
        expect(r[k], k).toEqual({
          ok: expect.objectContaining({ pod: pod.name, peer: pod.loopback, local: pod.loopback }),
        });
      }
    }
  });

  it('resolves cluster names with the search path through dns.lookup, dns.promises and dns.Resolver', async () => {
    const r = result(
      (
        await tb.execIn(
          a,
          [
            'node',
            CLIENT,
            'dnsLookupShort',
            'dnsLookupNs',
            'dnsLookupSvc',
            'dnsLookupFqdn',
            'dnsResolver',
            'dnsPromisesResolver',
            'dnsResolve4Module',
            'dnsMissing',
          ],
          env,
        )
      ).output,
    );
    expect(r).toEqual({
      dnsLookupShort: { ok: clusterIP },
      dnsLookupNs: { ok: clusterIP },
      dnsLookupSvc: { ok: clusterIP },
      dnsLookupFqdn: { ok: [clusterIP] },
      dnsResolver: { ok: [clusterIP] },
      dnsPromisesResolver: { ok: [clusterIP] },
      dnsResolve4Module: { ok: [clusterIP] },
      dnsMissing: { ok: 'ENOTFOUND' },
    });
  });

  it('carries HTTP and gRPC (grpc-js) from one pod to another through <svc>.<ns>.svc.cluster.local', async () => {
    const r = result((await tb.execIn(a, ['node', CLIENT, 'clusterHttp', 'grpc'], env)).output);
    expect(r.clusterHttp).toEqual({ ok: expect.objectContaining({ pod: 'pod-b' }) });
    expect(r.grpc).toEqual({ ok: expect.objectContaining({ pod: 'pod-b', msg: 'hi' }) });
  });

  it('reads volumes at their absolute mountPath (ESM import, promises, streams, CommonJS, callbacks)', async () => {
    const r = result(
      (await tb.execIn(a, ['node', CLIENT, 'fsNamedImport', 'fsPromises', 'fsStream', 'fsCjs', 'fsCallbackReaddir']))
        .output,
    );
    expect(r).toEqual({
      fsNamedImport: { ok: 'greeting: hello\n' },
      fsPromises: { ok: 'greeting: hello\n' },
      fsStream: { ok: 'greeting: hello\n' },
      fsCjs: { ok: 'tok-123' },
      fsCallbackReaddir: { ok: ['ca.crt', 'namespace', 'token'] },
    });
  });
});
