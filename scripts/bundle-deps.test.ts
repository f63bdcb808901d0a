// The client-node bundle (system/shared/kube/client-node-bundle.ts, built by scripts/bundle-client-node.ts on
// `npm ci`): a process started the way the tools are (scripts/preload.mjs) resolves the library to the bundle, which
// exports what the package exports, under the same names, and dist/serializer.js's ObjectSerializer as the bundle's
// own; a KubeConfig from it works. GWLAB_CLIENT_NODE_BUNDLE=0 keeps the package.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { clientNodeBundle } from '../system/shared/kube/client-node-bundle.ts';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const PRELOAD = join(ROOT, 'scripts', 'preload.mjs');

/** What a process started with scripts/preload.mjs sees of the library, as JSON. */
const PROBE = `
const main = await import('@kubernetes/client-node');
const ser = await import('@kubernetes/client-node/dist/serializer.js');
const kc = new main.KubeConfig();
kc.loadFromString(JSON.stringify({ clusters: [{ name: 'c', cluster: { server: 'https://127.0.0.1:6443' } }],
  users: [{ name: 'u', user: { token: 't' } }], contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
  'current-context': 'x' }));
console.log(JSON.stringify({
  url: import.meta.resolve('@kubernetes/client-node'),
  serializerUrl: import.meta.resolve('@kubernetes/client-node/dist/serializer.js'),
  names: Object.keys(main).sort(),
  serializerNames: Object.keys(ser).sort(),
  sameSerializer: ser.ObjectSerializer === main.gwlabSerializerObjectSerializer,
  server: kc.getCurrentCluster().server,
  crd: ser.ObjectSerializer.serialize({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition',
    spec: { group: 'g' } }, 'V1CustomResourceDefinition').spec.group,
}));`;

function probe(env: NodeJS.ProcessEnv = {}): Promise<any> {
  return new Promise((resolve, reject) =>
    execFile(
      process.execPath,
      ['--import', PRELOAD, '--input-type=module', '-e', PROBE],
      { cwd: ROOT, env: { ...process.env, ...env } },
      (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(JSON.parse(stdout))),
    ),
  );
}

describe('the client-node bundle', () => {
  const b = clientNodeBundle()!;

  it('exists after npm ci, named by the installed version', () => {
    expect(b.main).toBe(join(ROOT, 'node_modules', '.cache', 'gwlab', `client-node-${b.version}-f1.mjs`));
    expect(existsSync(b.main), `no ${b.main}: run node scripts/bundle-client-node.ts (npm ci runs it)`).toBe(true);
  });

  it('is what a tool loads: the package exports, the serializer as its own, a working KubeConfig', async () => {
    const [bundled, plain] = await Promise.all([probe(), probe({ GWLAB_CLIENT_NODE_BUNDLE: '0' })]);
    expect(bundled.url).toBe(pathToFileURL(b.main).href);
    expect(bundled.serializerUrl).toBe(pathToFileURL(b.serializer).href);
    expect(plain.url).toBe(pathToFileURL(join(b.packageDir, 'dist', 'index.js')).href);
    expect(bundled.names.filter((n: string) => !n.startsWith('gwlab'))).toEqual(plain.names);
    expect(bundled.names.length).toBeGreaterThan(800);
    expect(bundled.serializerNames).toEqual(plain.serializerNames);
    expect(bundled.sameSerializer).toBe(true);
    expect(bundled.server).toBe('https://127.0.0.1:6443');
    expect(bundled.crd).toBe('g');
    expect(plain.crd).toBe('g');
  });
});
