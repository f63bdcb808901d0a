// grpc-listen.ts, the one bind and stop of the image's grpc-js servers: the bound port (the real one for 0), the bind
// error as a rejection (EADDRINUSE on a taken port, as grpc-js reports it: "No address added out of total 1
// resolved"), and a stop that ends even with a call left open (tryShutdown waits on it; forceShutdown after the grace
// period cuts it: the client sees the call end with an error).
import * as grpc from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { bindGrpc, shutdownGrpc } from './grpc-listen.ts';

const echoService: grpc.ServiceDefinition = {
  Hold: {
    path: '/test.Hold/Hold',
    requestStream: false,
    responseStream: true,
    requestSerialize: (b: Buffer) => b,
    requestDeserialize: (b: Buffer) => b,
    responseSerialize: (b: Buffer) => b,
    responseDeserialize: (b: Buffer) => b,
  },
};

const servers: grpc.Server[] = [];
const clients: grpc.Client[] = [];
afterEach(() => {
  for (const c of clients.splice(0)) c.close();
  for (const s of servers.splice(0)) s.forceShutdown();
});

function server(): grpc.Server {
  const s = new grpc.Server();
  servers.push(s);
  return s;
}

describe('bindGrpc', () => {
  it('resolves with the bound port, the real one when 0 is asked for', async () => {
    const port = await bindGrpc(server(), '127.0.0.1', 0);
    expect(port).toBeGreaterThan(0);
  });

  it('rejects with the bind error when the port is taken', async () => {
    const port = await bindGrpc(server(), '127.0.0.1', 0);
    await expect(bindGrpc(server(), '127.0.0.1', port)).rejects.toThrow(/No address added/);
  });
});

describe('shutdownGrpc', () => {
  it('resolves at once with no call open', async () => {
    const s = server();
    await bindGrpc(s, '127.0.0.1', 0);
    await shutdownGrpc(s);
  });

  it('cuts a call still open after the grace period and resolves', async () => {
    const s = server();
    let opened!: () => void;
    const open = new Promise<void>((r) => {
      opened = r;
    });
    s.addService(echoService, { Hold: () => opened() }); // never ends the stream
    const port = await bindGrpc(s, '127.0.0.1', 0);
    const client = new grpc.Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
    clients.push(client);
    const call = client.makeServerStreamRequest(
      '/test.Hold/Hold',
      (b: Buffer) => b,
      (b: Buffer) => b,
      Buffer.alloc(0),
    );
    const ended = new Promise<grpc.StatusObject>((r) => call.on('status', r));
    call.on('error', () => {});
    await open;
    await shutdownGrpc(s, 100);
    expect((await ended).code).not.toBe(grpc.status.OK);
  });
});
