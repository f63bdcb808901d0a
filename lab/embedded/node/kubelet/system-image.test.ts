// The repository's own image through the catalog, the runner and the hook: the sample application started as
// `gwlab.local/system:<version>` with args [sampleapp] listens on its pod IP and answers there, its modules loaded
// through the lab's compile cache (the image environment's NODE_COMPILE_CACHE, lab/compile-cache.ts).
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, SYSTEM_IMAGE } from '../../../../system/image.ts';
import { compileCacheDir } from '../../../compile-cache.ts';
import { eventually, Testbed, waitForLog } from '../testing/testbed.ts';
import { containerArgv, ImageCatalog } from './images.ts';
import { CONFORMANCE_COREDNS_IMAGE, systemImages } from './system-images.ts';

describe('system image on the embedded node', () => {
  let tb: Testbed;
  const cache = mkdtempSync(join(tmpdir(), 'gwlab-system-image-cache-'));
  beforeAll(async () => {
    tb = await Testbed.start();
  });
  afterAll(async () => {
    await tb?.close();
    rmSync(cache, { recursive: true, force: true });
  });

  it("points the image's compile cache at the lab's", () => {
    expect(systemImages()[SYSTEM_IMAGE].env).toEqual({ NODE_COMPILE_CACHE: compileCacheDir() });
  });

  it("maps upstream's conformance images (echo-basic, the base manifests' coredns) to the echo component", () => {
    const catalog = new ImageCatalog({ home: tb.root, builtins: systemImages({ compileCache: cache }) });
    for (const image of [
      'registry.k8s.io/gateway-api/echo-basic:v1.5.1',
      'registry.k8s.io/gateway-api/echo-basic:v1.6.0-dev.3',
      'gcr.io/k8s-staging-gateway-api/echo-basic:v1.6.0-dev.2',
    ]) {
      expect(catalog.resolve(image).command.slice(-2)).toEqual([join(REPO_ROOT, 'system', 'main.ts'), 'echo']);
    }
    expect(catalog.resolve(CONFORMANCE_COREDNS_IMAGE).env?.GWLAB_ECHO_STANDIN).toBe('coredns');
  });

  it('runs the sample application from the catalog entry with the pod identity', async () => {
    const catalog = new ImageCatalog({ home: tb.root, builtins: systemImages({ compileCache: cache }) });
    const entry = catalog.resolve(SYSTEM_IMAGE);
    const argv = containerArgv(entry, { args: ['sampleapp', '--port', '$(PORT)'] }, { PORT: '8080' });
    const pod = tb.startPod({
      namespace: 'sampleapp',
      name: 'sampleapp-0',
      argv,
      // The image environment under the container's, as the kubelet gives it (container-loop.ts).
      env: { ...entry.env, PORT: '8080' },
      workingDir: entry.workingDir,
    });
    const res = await eventually(async () => {
      const r = await fetch(`http://${pod.ip}:8080/headers`, { headers: { 'x-gwlab-test': 'www.example.com' } });
      return r.ok ? ((await r.json()) as { headers: Record<string, unknown> }) : undefined;
    }, 20_000).catch((err) => {
      throw new Error(`${err}\n${pod.logs()}`);
    });
    expect(JSON.stringify(res!.headers).toLowerCase()).toContain('www.example.com');
    // The request was answered, but the runner may not have appended the line to the log yet.
    await waitForLog(pod.logFile, '"msg":"listening"');
    expect(pod.logs()).toContain('"msg":"listening"');
    // Its modules (the runtime hook and system/main.ts among them) went into the lab's compile cache.
    const cached = () => readdirSync(cache, { recursive: true, withFileTypes: true }).filter((f) => f.isFile()).length;
    await eventually(async () => cached() > 0 || undefined, 5_000);
    expect((await pod.proc.stop(5)).exitCode).toBe(0);
  });
});
