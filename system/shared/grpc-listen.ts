// Binding and stopping a grpc-js server as every gRPC server of the image does it (the ext-auth, ext-proc and
// rate-limit samples, the echo backend's gRPC mode, the control plane's ADS server): resolve with the bound port (the
// real one when 0 asked for any) or reject with the bind error; stop gracefully (grpc-js tryShutdown: no new calls,
// open ones finish), cutting the calls still open after a grace period (forceShutdown), so a stopping pod or test
// never waits on a client. Beside listen.ts, which does the same for plain Node servers; a file of its own so that
// they do not load grpc-js.
import * as grpc from '@grpc/grpc-js';

/** Binds `server` on host:port (plaintext unless `credentials` say otherwise); resolves with the bound port. */
export function bindGrpc(
  server: grpc.Server,
  host: string,
  port: number,
  credentials: grpc.ServerCredentials = grpc.ServerCredentials.createInsecure(),
): Promise<number> {
  return new Promise((resolve, reject) =>
    server.bindAsync(`${host}:${port}`, credentials, (err, bound) => (err ? reject(err) : resolve(bound))),
  );
}

/** Stops `server`: graceful first, the calls still open after `graceMs` cut; resolves once it is stopped. */
export function shutdownGrpc(server: grpc.Server, graceMs = 2000): Promise<void> {
  return new Promise<void>((resolve) => {
    const cut = setTimeout(() => {
      server.forceShutdown();
      resolve();
    }, graceMs);
    server.tryShutdown(() => {
      clearTimeout(cut);
      resolve();
    });
  });
}
