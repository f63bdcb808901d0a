// Listening and binding as every server of the image does it: resolve with the port once the socket is bound (the
// real one when 0 asked for any), reject with the bind error (EADDRINUSE, EACCES...) instead of leaving an 'error'
// event unhandled, and leave no listener behind either way. The sample services, the echo backend (HTTP, TCP, UDP,
// DNS) and the control plane's admin server call these rather than each writing the promise again.
import type dgram from 'node:dgram';
import type net from 'node:net';

/** Listens `server` on host:port; resolves with the bound port. */
export function listenOn(server: net.Server, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host, port }, () => {
      server.off('error', reject);
      resolve((server.address() as net.AddressInfo).port);
    });
  });
}

/** Binds the UDP socket `sock` to host:port; resolves with the bound port. */
export function bindUdp(sock: dgram.Socket, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    sock.once('error', reject);
    sock.bind(port, host, () => {
      sock.off('error', reject);
      resolve(sock.address().port);
    });
  });
}
