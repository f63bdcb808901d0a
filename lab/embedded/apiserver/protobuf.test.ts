// kubectl's typed clients send protobuf bodies (create namespace/configmap/secret/deployment/service/role/token,
// auth can-i/whoami): the server decodes them into the same objects the JSON path produces, and refuses (415) a body
// with a field its message table does not know instead of dropping it.
import protobuf from 'protobufjs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestLab, type TestLab } from './testing/test-lab.ts';

let lab: TestLab;
beforeAll(async () => {
  lab = await startTestLab();
});
afterAll(async () => {
  await lab?.stop();
});

it('kubectl generators create what they describe', async () => {
  await lab.k(['create', 'namespace', 'pb']);
  await lab.k(['create', 'configmap', 'c1', '-n', 'pb', '--from-literal=a=b']);
  const text = lab.file('notes.txt', 'hello\n');
  const bin = lab.file('blob.bin', '');
  (await import('node:fs')).writeFileSync(bin, Buffer.from([0, 0xff, 0xfe, 1]));
  await lab.k(['create', 'configmap', 'files', '-n', 'pb', `--from-file=${text}`, `--from-file=${bin}`]);
  await lab.k(['create', 'secret', 'generic', 's1', '-n', 'pb', '--from-literal=pw=s3cret']);
  await lab.k(['create', 'deployment', 'web', '-n', 'pb', '--image=example/web:1', '--replicas=0', '--port=8080']);
  await lab.k(['create', 'service', 'loadbalancer', 'lb', '-n', 'pb', '--tcp=80:8080']);
  await lab.k(['expose', 'deployment', 'web', '-n', 'pb', '--name=web', '--port=80', '--target-port=8080']);
  await lab.k([
    'run',
    'curl',
    '-n',
    'pb',
    '--image=example/curl:1',
    '--port=8081',
    '--env=MODE=test',
    '--labels=app=curl,tier=tools',
    '--',
    'sleep',
    '1000',
  ]);
  await lab.k([
    'expose',
    'deployment',
    'web',
    '-n',
    'pb',
    '--name=web-np',
    '--port=81',
    '--target-port=8080',
    '--type=NodePort',
  ]);
  await lab.k(['create', 'serviceaccount', 'bot', '-n', 'pb']);
  await lab.k(['create', 'role', 'pod-reader', '-n', 'pb', '--verb=get,list', '--resource=pods']);
  await lab.k(['create', 'rolebinding', 'bot-reads', '-n', 'pb', '--role=pod-reader', '--serviceaccount=pb:bot']);

  const get = async (args: string[]) => JSON.parse(await lab.k(['get', ...args, '-n', 'pb', '-o', 'json']));
  expect((await get(['ns', 'pb'])).metadata.labels['kubernetes.io/metadata.name']).toBe('pb');
  expect((await get(['cm', 'c1'])).data).toEqual({ a: 'b' });
  const files = await get(['cm', 'files']);
  expect(files.data).toEqual({ 'notes.txt': 'hello\n' });
  expect(files.binaryData).toEqual({ 'blob.bin': Buffer.from([0, 0xff, 0xfe, 1]).toString('base64') });
  expect(Buffer.from((await get(['secret', 's1'])).data.pw, 'base64').toString()).toBe('s3cret');
  const d = await get(['deploy', 'web']);
  expect(d.spec.replicas).toBe(0);
  expect(d.spec.template.spec.containers[0]).toMatchObject({
    image: 'example/web:1',
    ports: [{ containerPort: 8080, protocol: 'TCP' }],
    imagePullPolicy: 'IfNotPresent',
  });
  expect(d.spec.strategy.type).toBe('RollingUpdate');
  const svc = await get(['svc', 'web']);
  expect(svc.spec.ports[0]).toMatchObject({ port: 80, targetPort: 8080, protocol: 'TCP' });
  expect(svc.spec.selector).toEqual({ app: 'web' });
  expect((await get(['svc', 'lb'])).spec.type).toBe('LoadBalancer');
  const pod = await get(['pod', 'curl']);
  expect(pod.spec.containers[0]).toMatchObject({
    args: ['sleep', '1000'],
    env: [{ name: 'MODE', value: 'test' }],
    ports: [{ containerPort: 8081 }],
  });
  expect(pod.metadata.labels).toEqual({ app: 'curl', tier: 'tools' });
  const np = await get(['svc', 'web-np']);
  expect(np.spec.type).toBe('NodePort');
  expect(np.spec.ports[0]).toMatchObject({ port: 81, targetPort: 8080 });
  expect(np.spec.ports[0].nodePort).toBeGreaterThan(0);
  expect((await get(['sa', 'bot'])).metadata.name).toBe('bot');
  expect((await get(['secret', 's1'])).type).toBe('Opaque');

  // scale and rollout restart (JSON patches) on the protobuf-created Deployment.
  await lab.k(['scale', 'deployment', 'web', '-n', 'pb', '--replicas=3']);
  expect((await get(['deploy', 'web'])).spec.replicas).toBe(3);
  await lab.k(['rollout', 'restart', 'deployment', 'web', '-n', 'pb']);
  expect((await get(['deploy', 'web'])).spec.template.metadata.annotations).toHaveProperty(
    'kubectl.kubernetes.io/restartedAt',
  );
  expect((await get(['rolebinding', 'bot-reads'])).subjects).toEqual([
    { kind: 'ServiceAccount', name: 'bot', namespace: 'pb' },
  ]);

  // TokenRequest and SelfSubjectAccessReview travel as protobuf too.
  const token = (await lab.k(['create', 'token', 'bot', '-n', 'pb'])).trim();
  const short = (await lab.k(['create', 'token', 'bot', '-n', 'pb', '--audience=lab', '--duration=10m'])).trim();
  const claims = JSON.parse(Buffer.from(short.split('.')[1], 'base64url').toString());
  expect(claims.aud).toEqual(['lab']);
  expect(claims.exp - claims.iat).toBe(600);
  const kc = lab.kubeconfigFor(token, 'bot');
  const canI = async (args: string[]) =>
    (await lab.kubectl(['auth', 'can-i', ...args], { kubeconfig: kc })).stdout.trim();
  expect(await canI(['list', 'pods', '-n', 'pb'])).toBe('yes');
  expect(await canI(['delete', 'pods', '-n', 'pb'])).toBe('no');
  expect(await canI(['list', 'pods', '-n', 'default'])).toBe('no');
  expect(await canI(['get', '/version'])).toBe('yes');
  expect(await canI(['get', '/metrics'])).toBe('no');
  expect(await lab.k(['auth', 'whoami', '--kubeconfig', kc])).toMatch(/system:serviceaccount:pb:bot/);
  expect((await lab.kubectl(['get', 'pods', '-n', 'pb'], { kubeconfig: kc })).code).toBe(0);
});

it('a malformed protobuf body is a 400, not a crash', async () => {
  const { Agent, fetch } = await import('undici');
  const agent = new Agent({ connect: { ca: lab.server.caPem } });
  for (const body of [Buffer.from('nope'), Buffer.from([0x6b, 0x38, 0x73, 0x00, 0xff, 0xff, 0xff])]) {
    const r = await fetch(`${lab.server.url}/api/v1/namespaces/default/configmaps`, {
      method: 'POST',
      dispatcher: agent,
      headers: {
        Authorization: `Bearer ${lab.server.adminToken}`,
        'Content-Type': 'application/vnd.kubernetes.protobuf',
      },
      body,
    });
    expect(r.status).toBe(400);
    expect(((await r.json()) as any).reason).toBe('BadRequest');
  }
  await agent.close();
});

it('a protobuf field the server does not know is refused with 415, never dropped', async () => {
  // kubectl sends TokenRequest.spec.boundObjectRef (field 3) for --bound-object-*: not in the table.
  await lab.k(['create', 'namespace', 'pb415']);
  await lab.k(['create', 'serviceaccount', 'bot', '-n', 'pb415']);
  const r = await lab.kubectl([
    'create',
    'token',
    'bot',
    '-n',
    'pb415',
    '--bound-object-kind=Pod',
    '--bound-object-name=p',
  ]);
  expect(r.code).not.toBe(0);
  expect(r.stderr).toContain('field number 3 of message authentication.v1.TokenRequestSpec (at spec)');
  expect(r.stderr).toContain('kubectl apply -f');

  const { Agent, fetch } = await import('undici');
  const agent = new Agent({ connect: { ca: lab.server.caPem } });
  const post = async (apiVersion: string, kind: string, raw: Uint8Array) => {
    const typeMeta = protobuf.Writer.create().uint32(10).string(apiVersion).uint32(18).string(kind).finish();
    const unknown = protobuf.Writer.create().uint32(10).bytes(typeMeta).uint32(18).bytes(raw).finish();
    const res = await fetch(`${lab.server.url}/api/v1/namespaces/pb415/configmaps`, {
      method: 'POST',
      dispatcher: agent,
      headers: {
        Authorization: `Bearer ${lab.server.adminToken}`,
        'Content-Type': 'application/vnd.kubernetes.protobuf',
      },
      body: Buffer.concat([Buffer.from('k8s\0'), unknown]),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  const meta = protobuf.Writer.create().uint32(10).string('c415').finish();
  // ConfigMap{metadata, data{a: b}}: accepted.
  const entry = protobuf.Writer.create().uint32(10).string('a').uint32(18).string('b').finish();
  const ok = protobuf.Writer.create().uint32(10).bytes(meta).uint32(18).bytes(entry).finish();
  expect((await post('v1', 'ConfigMap', ok)).status).toBe(201);
  // The same plus immutable (field 4, which kubectl create configmap never sends): 415, and nothing stored.
  const meta2 = protobuf.Writer.create().uint32(10).string('c415b').finish();
  const extra = protobuf.Writer.create().uint32(10).bytes(meta2).uint32(18).bytes(entry).uint32(32).bool(true).finish();
  const bad = await post('v1', 'ConfigMap', extra);
  expect(bad.status).toBe(415);
  expect(bad.body).toMatchObject({ kind: 'Status', reason: 'UnsupportedMediaType', code: 415 });
  expect(bad.body.message).toContain('field number 4 of message core.v1.ConfigMap');
  expect(bad.body.message).toContain('kubectl apply -f');
  expect((await lab.kubectl(['get', 'cm', 'c415b', '-n', 'pb415'])).code).not.toBe(0);
  // An unknown field deep inside (ObjectMeta.ownerReferences, 13) names its path.
  const meta3 = protobuf.Writer.create().uint32(10).string('c415c').uint32(106).bytes(new Uint8Array()).finish();
  const deep = await post('v1', 'ConfigMap', protobuf.Writer.create().uint32(10).bytes(meta3).finish());
  expect(deep.status).toBe(415);
  expect(deep.body.message).toContain('field number 13 of message meta.v1.ObjectMeta (at metadata)');
  // A kind kubectl never sends as protobuf.
  const kind = await post('v1', 'LimitRange', protobuf.Writer.create().uint32(10).bytes(meta).finish());
  expect(kind.status).toBe(415);
  expect(kind.body.message).toContain('LimitRange');
  await agent.close();
});
