// kubectl's typed clients send protobuf bodies (create namespace/configmap/secret/deployment/service/role/token,
// run, expose, auth can-i/whoami): the server decodes them into the same objects the JSON path produces.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestLab, type TestLab } from './testing.ts';

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
  await lab.k(['create', 'secret', 'generic', 's1', '-n', 'pb', '--from-literal=pw=s3cret']);
  await lab.k(['create', 'deployment', 'web', '-n', 'pb', '--image=example/web:1', '--replicas=0', '--port=8080']);
  await lab.k(['create', 'service', 'loadbalancer', 'lb', '-n', 'pb', '--tcp=80:8080']);
  await lab.k(['expose', 'deployment', 'web', '-n', 'pb', '--name=web', '--port=80', '--target-port=8080']);
  await lab.k(['run', 'curl', '-n', 'pb', '--image=example/curl:1', '--labels=app=curl', '--', 'sleep', '1000']);
  await lab.k(['create', 'serviceaccount', 'bot', '-n', 'pb']);
  await lab.k(['create', 'role', 'pod-reader', '-n', 'pb', '--verb=get,list', '--resource=pods']);
  await lab.k(['create', 'rolebinding', 'bot-reads', '-n', 'pb', '--role=pod-reader', '--serviceaccount=pb:bot']);

  const get = async (args: string[]) => JSON.parse(await lab.k(['get', ...args, '-n', 'pb', '-o', 'json']));
  expect((await get(['ns', 'pb'])).metadata.labels['kubernetes.io/metadata.name']).toBe('pb');
  expect((await get(['cm', 'c1'])).data).toEqual({ a: 'b' });
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
  expect(pod.spec.containers[0].args).toEqual(['sleep', '1000']);
  expect(pod.metadata.labels).toEqual({ app: 'curl' });
  expect((await get(['rolebinding', 'bot-reads'])).subjects).toEqual([
    { kind: 'ServiceAccount', name: 'bot', namespace: 'pb' },
  ]);

  // TokenRequest and SelfSubjectAccessReview travel as protobuf too.
  const token = (await lab.k(['create', 'token', 'bot', '-n', 'pb'])).trim();
  const kc = lab.kubeconfigFor(token, 'bot');
  const canI = async (args: string[]) =>
    (await lab.kubectl(['auth', 'can-i', ...args], { kubeconfig: kc })).stdout.trim();
  expect(await canI(['list', 'pods', '-n', 'pb'])).toBe('yes');
  expect(await canI(['delete', 'pods', '-n', 'pb'])).toBe('no');
  expect(await canI(['list', 'pods', '-n', 'default'])).toBe('no');
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
