// The API server's loopback socket (index.ts listenLoopback): the lab process's own clients (credentials()) reach it
// over a Unix socket in the lab's store folder, owner-only, as plain HTTP with the same authentication; it goes when
// the server stops; a home whose socket path would be too long keeps them on HTTPS.
import { mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../testing/tmp.ts';
import { KubeClient, unixSocketConnector } from '../client/kube-client.ts';
import { type ApiServerHandle, startApiServer } from './index.ts';

const servers: ApiServerHandle[] = [];
afterAll(async () => {
  for (const s of servers) await s.stop();
});

describe('the loopback socket', () => {
  it("carries the lab process's own clients, authenticated; owner-only; removed on stop", async () => {
    const home = tempDir('gwlab-lb-');
    const server = await startApiServer({ labName: 'lb', home });
    servers.push(server);
    const creds = server.credentials({ user: 'system:kube-controller-manager' });
    expect(creds.server).toBe('http://localhost');
    const client = new KubeClient(creds);
    const ns = await client.request('GET', '/api/v1/namespaces/default');
    expect(ns.metadata.name).toBe('default');
    await client.close();
    const sock = join(home, 'lb', 'store', 'apiserver.sock');
    expect(statSync(sock).isSocket()).toBe(true);
    expect(statSync(sock).mode & 0o777).toBe(0o600);
    // Without a token: 401, as over HTTPS.
    const dispatcher = new Agent({ connect: unixSocketConnector(sock) });
    const anon = await request('http://localhost/api/v1/namespaces', { dispatcher });
    expect(anon.statusCode).toBe(401);
    await anon.body.dump();
    await dispatcher.close();
    await server.stop();
    expect(() => statSync(sock)).toThrow(/ENOENT/);
  });

  it('is not made where its path would be too long: the clients use HTTPS', async () => {
    const home = join(tempDir('gwlab-lb-'), 'x'.repeat(90));
    mkdirSync(home);
    const server = await startApiServer({ labName: 'lb', home });
    servers.push(server);
    const creds = server.credentials();
    expect(creds.server).toBe(server.url);
    expect(creds.server).toMatch(/^https:/);
    const client = new KubeClient(creds);
    expect((await client.request('GET', '/version')).major).toBe('1');
    await client.close();
  });
});
