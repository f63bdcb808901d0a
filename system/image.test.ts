// The image seams: the Dockerfile's ENTRYPOINT agrees with the catalog's command, and every manifest uses the
// repository's image tag.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Deployment } from 'kubernetes-models/apps/v1';
import { Namespace, Service, ServiceAccount } from 'kubernetes-models/v1';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import pkg from '../package.json' with { type: 'json' };
import { IMAGE_ENTRYPOINT, IMAGE_ROOT, REPO_ROOT, SYSTEM_IMAGE, systemEntrypoint } from './image.ts';

interface Instruction {
  op: string;
  args: string;
}

/** Dockerfile instructions with comments dropped and `\` continuations joined. */
function parseDockerfile(text: string): Instruction[] {
  const out: Instruction[] = [];
  let pending = '';
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (pending === '' && (line === '' || line.startsWith('#'))) continue;
    if (line.endsWith('\\')) {
      pending += line.slice(0, -1) + ' ';
      continue;
    }
    const full = (pending + line).trim();
    pending = '';
    const m = /^(\S+)\s*(.*)$/.exec(full)!;
    out.push({ op: m[1].toUpperCase(), args: m[2] });
  }
  return out;
}

describe('system image', () => {
  it('is gwlab.local/system:<package.json version>, never latest', () => {
    expect(SYSTEM_IMAGE).toBe(`gwlab.local/system:${pkg.version}`);
    expect(SYSTEM_IMAGE).not.toMatch(/:latest$/);
  });

  it("the Dockerfile's ENTRYPOINT runs the same command as the image catalog's entry", () => {
    const ins = parseDockerfile(readFileSync(join(REPO_ROOT, 'system', 'Dockerfile'), 'utf8'));
    const entrypoints = ins.filter((i) => i.op === 'ENTRYPOINT');
    expect(entrypoints).toHaveLength(1);
    // Exec form, so the component args of a pod follow it unchanged (no shell in between).
    const entry = JSON.parse(entrypoints[0].args);
    expect(entry).toEqual(IMAGE_ENTRYPOINT);
    expect(entry).toEqual(systemEntrypoint({ root: IMAGE_ROOT, node: 'node' }));
    // The host command is the same shape: node, then this checkout's system/main.ts.
    const host = systemEntrypoint();
    expect(host[0]).toBe(process.execPath);
    expect(host[1]).toBe(join(REPO_ROOT, entry[1].slice(IMAGE_ROOT.length + 1)));
    expect(existsSync(host[1])).toBe(true);
    // No CMD: a default component would hide a pod that forgot its args.
    expect(ins.filter((i) => i.op === 'CMD')).toHaveLength(0);
    // The paths agree with where the Dockerfile puts things.
    expect(ins.filter((i) => i.op === 'WORKDIR').at(-1)?.args).toBe(IMAGE_ROOT);
    expect(ins.some((i) => i.op === 'COPY' && /^system\/?\s+(\.\/system\/?|\/app\/system\/?)$/.test(i.args))).toBe(
      true,
    );
  });

  it('builds on the Node major the project runs on, installing production dependencies with npm ci', () => {
    const ins = parseDockerfile(readFileSync(join(REPO_ROOT, 'system', 'Dockerfile'), 'utf8'));
    const major = /\d+/.exec(pkg.engines.node)![0];
    const from = ins.filter((i) => i.op === 'FROM');
    expect(from).toHaveLength(1);
    expect(from[0].args).toMatch(new RegExp(`^node:${major}([.-]|$)`));
    expect(ins.some((i) => i.op === 'RUN' && /\bnpm ci\b.*--omit=dev/.test(i.args))).toBe(true);
    expect(ins.some((i) => i.op === 'COPY' && /package-lock\.json/.test(i.args))).toBe(true);
  });
});

function manifestFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && /\.ya?ml$/.test(e.name))
    .map((e) => join(e.parentPath, e.name));
}

function loadDocs(file: string): any[] {
  return parseAllDocuments(readFileSync(file, 'utf8'))
    .map((d) => {
      if (d.errors.length) throw new Error(`${file}: ${d.errors[0].message}`);
      return d.toJS();
    })
    .filter((d) => d != null);
}

/** Every string in an object tree, with its path. */
function strings(value: unknown, path = ''): [string, string][] {
  if (typeof value === 'string') return [[path, value]];
  if (Array.isArray(value)) return value.flatMap((v, i) => strings(v, `${path}[${i}]`));
  if (value && typeof value === 'object') {
    return Object.entries(value).flatMap(([k, v]) => strings(v, path ? `${path}.${k}` : k));
  }
  return [];
}

describe('manifests', () => {
  const manifestsDir = join(REPO_ROOT, 'system', 'manifests');

  it('every reference to the system image under system/manifests uses SYSTEM_IMAGE', () => {
    const files = manifestFiles(manifestsDir);
    expect(files.length).toBeGreaterThanOrEqual(2);
    const refs: string[] = [];
    for (const file of files) {
      for (const doc of loadDocs(file)) {
        for (const [path, s] of strings(doc)) {
          if (!s.includes('gwlab.local/system')) continue;
          refs.push(file);
          expect(s, `${file}: ${doc.kind}/${doc.metadata?.name} ${path}`).toBe(SYSTEM_IMAGE);
        }
      }
    }
    expect(refs.some((f) => f.endsWith('sampleapp.yaml'))).toBe(true);
    expect(refs.some((f) => f.endsWith('extauth.yaml'))).toBe(true);
    expect(refs.some((f) => f.endsWith('ratelimit.yaml'))).toBe(true);
  });

  const H2C = 'kubernetes.io/h2c';
  const cases = [
    { file: 'sampleapp.yaml', name: 'sampleapp', ports: [['http', 8000, 8080]], args: [] as string[] },
    // The ext-auth sample's gRPC form (Authorization/Check) on 9001, spoken to over h2c.
    {
      file: 'extauth.yaml',
      name: 'extauth',
      ports: [
        ['http', 9000, 9000],
        ['grpc', 9001, 9001, H2C],
      ],
      args: ['--grpc-port', '9001'],
    },
    // The rate-limit sample: ShouldRateLimit over gRPC on 8081, its counters over HTTP on 8080.
    {
      file: 'ratelimit.yaml',
      name: 'ratelimit',
      ports: [
        ['grpc', 8081, 8081, H2C],
        ['http', 8080, 8080],
      ],
      args: [
        '--rule',
        'gwlab:generic_key:3/minute',
        '--rule',
        'gwlab:user:5/minute',
        '--rule',
        'gwlab:remote_address:1000/minute',
      ],
    },
    // The ext-proc sample: ExternalProcessor/Process over gRPC on 9002.
    { file: 'extproc.yaml', name: 'extproc', ports: [['grpc', 9002, 9002, H2C]], args: [] },
  ] as { file: string; name: string; ports: [string, number, number, string?][]; args: string[] }[];
  for (const c of cases) {
    it(`${c.file}: namespace, ServiceAccount, Service ${c.name} (${c.ports.map((p) => `${p[1]} → ${p[2]}`).join(', ')}), Deployment`, () => {
      const docs = loadDocs(join(manifestsDir, c.file));
      const byKind = (kind: string) => docs.filter((d) => d.kind === kind);
      expect(docs.map((d) => d.kind)).toEqual(['Namespace', 'ServiceAccount', 'Service', 'Deployment']);

      // Schema-valid Kubernetes objects (the maintained models on npm).
      new Namespace(byKind('Namespace')[0]).validate();
      new ServiceAccount(byKind('ServiceAccount')[0]).validate();
      new Service(byKind('Service')[0]).validate();
      new Deployment(byKind('Deployment')[0]).validate();

      expect(byKind('Namespace')[0].metadata.name).toBe(c.name);
      for (const d of docs.slice(1)) expect(d.metadata.namespace, d.kind).toBe(c.name);

      const svc = byKind('Service')[0];
      expect(svc.metadata.name).toBe(c.name);
      expect(svc.spec.ports).toEqual(
        c.ports.map(([name, port, targetPort, appProtocol]) => ({
          name,
          port,
          targetPort,
          protocol: 'TCP',
          ...(appProtocol ? { appProtocol } : {}),
        })),
      );

      const dep = byKind('Deployment')[0];
      expect(dep.metadata.name).toBe(c.name);
      const pod = dep.spec.template;
      // The Service selects exactly the Deployment's pods.
      expect(dep.spec.selector.matchLabels).toEqual(svc.spec.selector);
      expect(pod.metadata.labels).toMatchObject(svc.spec.selector);
      expect(pod.spec.serviceAccountName).toBe(byKind('ServiceAccount')[0].metadata.name);

      expect(pod.spec.containers).toHaveLength(1);
      const container = pod.spec.containers[0];
      expect(container.image).toBe(SYSTEM_IMAGE);
      expect(container.imagePullPolicy).toBe('IfNotPresent');
      expect(container.args).toEqual([c.name, ...c.args]);
      expect(container.command).toBeUndefined();
      expect(container.ports).toEqual(
        c.ports.map(([name, , containerPort]) => ({ name, containerPort, protocol: 'TCP' })),
      );
      // The component's default port is the container port, so args need no --port.
      const probe = container.readinessProbe;
      expect(probe).toBeDefined();
      expect((probe.httpGet ?? probe.tcpSocket).port).toBe(
        c.ports[0]![0] === 'grpc' && probe.tcpSocket ? 'grpc' : 'http',
      );
    });
  }
});
