import { unlinkSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../testing/tmp.ts';
import { probeDockerEngine, requireContainerTools } from './docker.ts';

describe('docker engine probe', () => {
  it('reports no engine when the socket is missing, even though a docker client may exist', async () => {
    const sock = join(tempDir('gwlab-dock-'), 'none.sock');
    const probe = await probeDockerEngine({ DOCKER_HOST: `unix://${sock}` });
    expect(probe.ok).toBe(false);
    if (!probe.ok) expect(probe.reason).toMatch(/socket does not exist/);
  });

  it('finds an engine that answers /_ping on its socket', async () => {
    const sock = join(tempDir('gwlab-dock-'), 'd.sock');
    const server = http.createServer((req, res) => {
      res.writeHead(req.url === '/_ping' ? 200 : 404, { 'api-version': '1.47' });
      res.end('OK');
    });
    await new Promise<void>((r) => server.listen(sock, r));
    try {
      const probe = await probeDockerEngine({ DOCKER_HOST: `unix://${sock}` });
      expect(probe).toMatchObject({ ok: true, apiVersion: '1.47' });
    } finally {
      server.close();
      try {
        unlinkSync(sock);
      } catch {}
    }
  });

  it('names the missing pieces and the embedded default', async () => {
    const sock = join(tempDir('gwlab-dock-'), 'none.sock');
    await expect(
      requireContainerTools('kind', { PATH: '/nonexistent', DOCKER_HOST: `unix://${sock}` }),
    ).rejects.toThrow(
      /kind backend cannot run.*docker command is not on PATH.*kind command.*no Docker engine.*embedded backend/s,
    );
  });
});
